// What the policy's cost units are worth in time (contract/sections/policy.md §5, Bounds), in this
// process, without terraform:
//
//   node --import tsx bench/policy-units.ts [--json-out FILE]
//
// 1. regex: `matches` by RE2's NFA over addresses of 100 and 1,024 characters, for patterns from a
//    few instructions to the bound's largest: nanoseconds an instruction and character (what
//    cost.ts's REGEX charges 2 units for), and µs a unit of what the meter charges.
// 2. examples: 10,000 harmless changes (creates at `terraform_data.web["<i>"]`) under 50 to 120
//    copies of the contract's example rules (§6: protect-databases, iam-needs-review), evaluated as
//    a run evaluates them: units spent (the same on every machine), CPU time, µs a unit.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { compileExpression, changeBinding } from '../src/policy/cel.ts';
import { CostMeter } from '../src/policy/cost.ts';
import { compilePattern } from '../src/policy/regex.ts';
import { evaluateCreates, examplesEvaluator, exampleView as view, policyCode } from './lib/policy-examples.ts';

const { values } = parseArgs({ options: { 'json-out': { type: 'string' } } });

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

const PATTERNS = [
  '^db',
  '(?i)(k+)+x',
  '(a|k|kk)*z',
  '(?i)k',
  '.{100}',
  '.{300}',
  '.{1000}',
  '(.{10}){100}',
  '([a-z]{1,20}-){1,40}x',
];

function benchRegex() {
  const rows = [];
  for (const pattern of PATTERNS) {
    const compiled = compilePattern(pattern);
    if (!('instructions' in compiled)) throw new Error(`${pattern}: ${compiled.refused}`);
    for (const len of [100, 1024]) {
      const address = `terraform_data.x["${'k'.repeat(len - 20)}"]`;
      compiled.matcher.test(address);
      const started = cpuMs();
      let calls = 0;
      while (cpuMs() - started < 300 && calls < 1000) {
        compiled.matcher.test(address);
        calls++;
      }
      const ms = (cpuMs() - started) / calls;
      const program = compileExpression(`change.address.matches(${JSON.stringify(pattern)})`, 'change');
      if (!('program' in program)) throw new Error(String(program.problems));
      const meter = new CostMeter(1e12, 'rule');
      program.program(changeBinding(view(address)), meter);
      const row = {
        pattern,
        instructions: compiled.instructions,
        chars: address.length,
        msPerCall: ms,
        nsPerInstructionChar: (ms * 1e6) / (address.length * compiled.instructions),
        unitsPerCall: meter.spent,
        usPerUnit: (ms * 1000) / meter.spent,
      };
      rows.push(row);
      console.log(
        `regex ${JSON.stringify(pattern)} (${row.instructions} instructions) over ${row.chars} characters: ${ms.toFixed(3)} ms a call, ${row.nsPerInstructionChar.toFixed(1)} ns an instruction and character, ${row.unitsPerCall} units, ${row.usPerUnit.toFixed(4)} µs a unit`,
      );
    }
  }
  return rows;
}

async function benchExamples() {
  const code = await policyCode();
  const rows = [];
  for (const rules of [50, 92, 100, 120]) {
    const evaluator = examplesEvaluator(code, rules);
    const started = cpuMs();
    const outcome = evaluateCreates(code, evaluator, 10_000);
    const ms = cpuMs() - started;
    const row = {
      rules,
      changes: 10_000,
      units: outcome.cost,
      unitsPerRuleChange: outcome.cost / (rules * 10_000),
      costExceeded: outcome.costExceeded,
      cpuMs: ms,
      usPerUnit: (ms * 1000) / outcome.cost,
    };
    rows.push(row);
    console.log(
      `examples: ${rules} rules over 10,000 creates: ${row.units.toLocaleString('en-US')} units (${row.unitsPerRuleChange.toFixed(1)} a rule and change)${row.costExceeded ? ', the budget ran out' : ''}, CPU ${(ms / 1000).toFixed(2)} s, ${row.usPerUnit.toFixed(3)} µs a unit`,
    );
  }
  return rows;
}

const results = { node: process.version, regex: benchRegex(), examples: await benchExamples() };
if (values['json-out']) writeFileSync(values['json-out'], `${JSON.stringify(results, null, 2)}\n`);
