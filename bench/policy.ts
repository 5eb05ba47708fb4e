// Part 6 of `npm run bench` (bench/run.ts): the worst rules (contract/sections/policy.md §5, Bounds), through
// `captf-runner classify --json --policy DIR -` of a plan document of `changes` creates with 9,000-character keys.
// The issue's rules are refused when the policy loads; the others pass the estimate (made for 1,024-character
// addresses) and spend their whole budget on every change, until the plan's budget is spent and every rule fails
// closed: the longest and largest an evaluation can be. Wall and CPU time, cost units, µs a unit, peak RSS.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Bench, fmt, log, mb, now, q, readSelfUsage, SELF_USAGE } from './lib/harness.ts';

/** A case the policy refuses as it loads: its time and memory until then. */
interface RefusedRow {
  case: string;
  refused: true;
  ms: number;
  cpuMs: number;
  peakRssBytes: number;
}

/** A case evaluated until its budget ran out. */
interface EvaluatedRow {
  case: string;
  changes: number;
  rules: number;
  ms: number;
  cpuMs: number;
  peakRssBytes: number;
  cost: number;
  costExceeded: boolean;
  timedOut: boolean;
  deniedTotal: number;
  cpuUsPerUnit: number;
}

export type PolicyRow = RefusedRow | EvaluatedRow;

interface PolicyCase {
  name: string;
  /** Rule names and their match expressions, each a deny rule. */
  rules: Record<string, string>;
  changes: number;
  refused?: true;
}

const POLICY_CASES: PolicyCase[] = [
  {
    name: "the issue's rules (cubic in a key; a list of lists from a key)",
    rules: {
      cubic:
        'change.address.split("").exists(a, change.address.split("").exists(b, change.address.indexOf(a + b + "#") >= 0))',
      lists: 'change.address.split("").map(c, change.address.split("")).size() > 0',
    },
    changes: 5,
    refused: true,
  },
  {
    name: 'a search inside a loop over the key',
    rules: { search: 'change.address.split("").exists(c, change.address.contains(c + "#"))' },
    changes: 60,
  },
  {
    name: "a map over the key's characters (linear: within its budget)",
    rules: { mapped: 'change.address.split("").map(c, c + "x").size() < 0' },
    changes: 60,
  },
  {
    name: 'a list of strings built from the key, then searched',
    rules: { built: 'change.address.split("").map(c, change.address + c).exists(s, s.contains("#"))' },
    changes: 60,
  },
  {
    name: 'a string built at each step of a map over the key',
    rules: { strings: 'change.address.split("").map(c, change.address + c).size() < 0' },
    changes: 60,
  },
  {
    name: 'all three, each on every change',
    rules: {
      search: 'change.address.split("").exists(c, change.address.contains(c + "#"))',
      built: 'change.address.split("").map(c, change.address + c).exists(s, s.contains("#"))',
      strings: 'change.address.split("").map(c, change.address + c).size() < 0',
    },
    changes: 30,
  },
];

function policyPlan(file: string, changes: number): void {
  const key = (i: number) => `${i}-${'k'.repeat(9000)}`;
  const entry = (i: number) => ({
    address: `terraform_data.db["${key(i)}"]`,
    mode: 'managed',
    type: 'terraform_data',
    name: 'db',
    index: key(i),
    provider_name: 'terraform.io/builtin/terraform',
    change: { actions: ['create'], before: null, after: { input: 'x' } },
  });
  writeFileSync(
    file,
    JSON.stringify({
      format_version: '1.2',
      terraform_version: '1.11.4',
      resource_changes: Array.from({ length: changes }, (_, i) => entry(i)),
    }),
  );
}

export function benchPolicy(b: Bench): PolicyRow[] {
  log('\n== policy: the worst rules, `classify --json --policy DIR -` of creates with 9,000-character keys');
  const rows: PolicyRow[] = [];
  for (const [i, c] of POLICY_CASES.entries()) {
    const dir = join(b.tmp, `policy-${i}`);
    mkdirSync(dir, { recursive: true });
    const rules = Object.entries(c.rules)
      .map(([name, match]) => `- name: ${name}\n  match: ${JSON.stringify(match)}\n  effect: deny\n`)
      .join('');
    writeFileSync(join(dir, 'policy.yaml'), `apiVersion: policy.captf.io/v1\nrules:\n${rules}`);
    const plan = join(b.tmp, 'policy-plan.json');
    policyPlan(plan, c.changes);
    const out = join(b.tmp, 'policy-out.json');
    const usageFile = join(b.tmp, 'policy-usage.json');
    rmSync(usageFile, { force: true });
    const started = now();
    const r = spawnSync(
      'bash',
      [
        '-c',
        `${q(b.node)} --require ${q(SELF_USAGE)} ${q(b.runner)} classify --json --policy ${q(dir)} - <${q(plan)} >${q(out)} 2>${q(out)}.err`,
      ],
      { env: { ...b.env, BENCH_SELF_USAGE_FILE: usageFile }, stdio: 'ignore' },
    );
    const ms = now() - started;
    const usage = readSelfUsage(usageFile);
    if (c.refused) {
      if (r.status !== 4)
        throw new Error(`policy case "${c.name}": expected the policy refused (exit 4), got ${r.status}`);
      rows.push({ case: c.name, refused: true, ms, cpuMs: usage.cpuMs, peakRssBytes: usage.maxRssBytes });
      log(
        `  ${c.name}: refused when the policy loads in ${fmt(ms)} (CPU ${fmt(usage.cpuMs)}), peak RSS ${mb(usage.maxRssBytes)}`,
      );
      continue;
    }
    if (r.status !== 0)
      throw new Error(`policy case "${c.name}" exited ${r.status}: ${readFileSync(`${out}.err`, 'utf8').slice(-2000)}`);
    const { cost, costExceeded, timedOut, deniedTotal }: Omit<EvaluatedRow, 'case'> = JSON.parse(
      readFileSync(out, 'utf8'),
    ).policy;
    rows.push({
      case: c.name,
      changes: c.changes,
      rules: Object.keys(c.rules).length,
      ms,
      cpuMs: usage.cpuMs,
      peakRssBytes: usage.maxRssBytes,
      cost,
      costExceeded,
      timedOut,
      deniedTotal,
      cpuUsPerUnit: (usage.cpuMs * 1000) / cost,
    });
    log(
      `  ${c.name}: ${c.changes} changes, ${fmt(ms)} (CPU ${fmt(usage.cpuMs)}), ${cost.toLocaleString('en-US')} units (${((usage.cpuMs * 1000) / cost).toFixed(3)} µs CPU a unit, the start included), ` +
        `peak RSS ${mb(usage.maxRssBytes)}; costExceeded ${costExceeded}, timedOut ${timedOut}, ${deniedTotal} denied`,
    );
  }
  return rows;
}
