// One process's evaluation of the contract's example rules over harmless creates (bench/lib/policy-examples.ts), with
// the policy code of the tree at --src (this one by default): what bench/masking-policy.ts runs once a side and a
// round, so that each cold figure is a fresh process's first evaluation, as in a run. Prints one JSON line.
//
//   node --import tsx bench/policy-round.ts [--src DIR] [--rules 20] [--changes 10000] [--rounds 5] [--mode judged]
//
// Modes, each what a run does less what the one before it adds:
// - judged: as a run judges a plan (src/policy/judge.ts: one rule a step, the event loop's slices, the stop request);
// - evaluator: the evaluator given each change directly (the cost meter, the budgets, the time limit, the findings);
// - metered: each rule's match over each change's bindings, a new cost meter each (cel-meter.ts's wrapping, no evaluator);
// - library: the same expressions planned by the CEL library without the metering (its own evaluation alone);
// - bindings: the changes' bindings built, nothing evaluated.
// Round 0 is cold (the code not yet optimised); the warm figure is the median of the rounds after it.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { parse as parseCel, plan as planCel } from '@bufbuild/cel';
import { parse as parseYaml } from 'yaml';
import {
  createView,
  evaluateCreates,
  examplesEvaluator,
  examplesPolicy,
  examplesText,
  judgeCreates,
  policyCode,
  REPO,
} from './lib/policy-examples.ts';
import { medianOf, ownCpuMs } from './lib/harness.ts';

const MODES = ['judged', 'evaluator', 'metered', 'library', 'bindings'] as const;
type Mode = (typeof MODES)[number];

const { values: opts } = parseArgs({
  options: {
    src: { type: 'string', default: REPO },
    rules: { type: 'string', default: '20' },
    changes: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '5' },
    mode: { type: 'string', default: 'judged' },
  },
});
const RULES = Number(opts.rules);
const CHANGES = Number(opts.changes);
const ROUNDS = Number(opts.rounds);
const MODE = opts.mode as Mode;
if (!MODES.includes(MODE)) throw new Error(`--mode takes ${MODES.join(', ')}`);
if (!(RULES > 0 && RULES % 2 === 0) || !(CHANGES > 0) || !(ROUNDS >= 2))
  throw new Error('--rules takes an even number, --changes a positive one, --rounds 2 or more');

const load = (path: string) => import(pathToFileURL(join(opts.src, path)).href);

/** One round: what it spent (units, for the modes that meter), checked to be the examples' verdict on harmless creates. */
type Round = () => Promise<number | undefined>;

async function round(): Promise<Round> {
  const code = await policyCode(opts.src);
  const harmless = (outcome: { denied: unknown[]; costExceeded: boolean; timedOut: boolean; cost: number }) => {
    if (outcome.denied.length > 0 || outcome.costExceeded || outcome.timedOut)
      throw new Error('the examples judged harmless creates');
    return outcome.cost;
  };
  if (MODE === 'judged') {
    const policy = examplesPolicy(code, RULES);
    return async () => harmless(await judgeCreates(code, policy, CHANGES));
  }
  if (MODE === 'evaluator') return async () => harmless(evaluateCreates(code, examplesEvaluator(code, RULES), CHANGES));
  const { changeBinding, compileExpression } = await load('src/policy/cel.ts');
  const matches = (parseYaml(examplesText(RULES)) as { rules: { match: string }[] }).rules.map((rule) => rule.match);
  if (MODE === 'bindings')
    return async () => {
      for (let i = 0; i < CHANGES; i++) changeBinding(createView(i));
      return undefined;
    };
  if (MODE === 'metered') {
    const { CostMeter, RULE_COST_LIMIT } = await load('src/policy/cost.ts');
    const programs = matches.map((source) => compileExpression(source, 'change').program);
    return async () => {
      let units = 0;
      for (let i = 0; i < CHANGES; i++) {
        const bindings = changeBinding(createView(i));
        for (const program of programs) {
          const meter = new CostMeter(RULE_COST_LIMIT, 'rule');
          if (program(bindings, meter) !== false) throw new Error('a match did not give false');
          units += meter.spent;
        }
      }
      return units;
    };
  }
  const { ENV } = await load('src/policy/cel-shapes.ts');
  const programs = matches.map((source) => planCel(ENV, parseCel(source).expr!));
  return async () => {
    for (let i = 0; i < CHANGES; i++) {
      const bindings = changeBinding(createView(i));
      for (const program of programs) if (program(bindings) !== false) throw new Error('a match did not give false');
    }
    return undefined;
  };
}

const run = await round();
const roundsMs: number[] = [];
let units: number | undefined;
for (let i = 0; i < ROUNDS; i++) {
  const started = ownCpuMs();
  units = await run();
  roundsMs.push(ownCpuMs() - started);
}
console.log(
  JSON.stringify({
    mode: MODE,
    src: opts.src,
    rules: RULES,
    changes: CHANGES,
    units,
    coldMs: roundsMs[0],
    warmMs: medianOf(roundsMs.slice(1)),
    roundsMs,
  }),
);
