// What the masking boundary and the policy evaluation cost beside an apply (issue 44 item 3; BENCHMARKS.md,
// target "masking and policies ≤ 5 % of an apply at 10,000 instances"), measured in one run:
//
//   npm run build && node --import tsx bench/masking-policy.ts [--size 100x100] [--mib 8] [--rounds 5]
//     [--policy-rounds 5] [--baseline DIR] [--breakdown] [--runner dist/captf-runner.mjs] [--terraform PATH]
//     [--json-out FILE]
//
// 1. apply: the built runner's no-change apply of a module of R × N terraform_data instances (default
//    100 × 100, 10,000; a synthetic state terraform would have written, as in bench/apply.ts), one untimed
//    first run, then one timed before the policy's rounds and one after them: the CPU time of the whole process
//    tree (bench/rusage.py; the ratio takes their mean), and terraform's text the runner printed (its stdout's
//    `| ` lines): what passed through the masking boundary.
// 2. masking: in this process, src/masking/mask.ts's LineMasker (the boundary every line of terraform's
//    text passes) over that text, repeated to --mib MiB, in batches of 64 lines as the runner hands them
//    over: with no secret (a run without sensitive.tfvars.json) and with eight (passwords, a token, a URL,
//    a PEM block, a JSON document), one secret written into every 1,000th line, each of which must come
//    out masked (else the bench fails). CPU ms a MiB, the median of --rounds rounds.
// 3. policy: the contract's example rules (2, and 20 in ten copies) over 10,000 creates, judged as a run
//    judges them (bench/policy-round.ts, mode judged), one process a round: CPU ms of its first evaluation
//    (cold, as a run's one evaluation in its process: the figure the ratio takes) and of the 4 after it (warm),
//    medians over --policy-rounds processes. With --baseline DIR, the policy code of another tree (a checkout of
//    main: its src/ and a node_modules beside it) in the same rounds, interleaved (each round alternates which
//    side goes first). With --breakdown, the 20 rules also in the modes that split the time: the CEL library's
//    evaluation alone, with the cost metering, the evaluator, the bindings (bench/policy-round.ts says each).
// Then the ratio: the masking of the apply's own text (at the MiB rate, with eight secrets) plus the
// policy over 10,000 changes, ÷ the apply's CPU.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { LineMasker, MASK, Masker } from '../src/masking/mask.ts';
import { cleanEnv } from './lib/env.ts';
import { moduleText, parseModuleSize, stateText } from './lib/module.ts';
import { loadavg, medianOf, ownCpuMs } from './lib/harness.ts';

const REPO = resolve(import.meta.dirname, '..');
const { values: opts } = parseArgs({
  options: {
    size: { type: 'string', default: '100x100' },
    mib: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '5' },
    'policy-rounds': { type: 'string', default: '5' },
    baseline: { type: 'string' },
    breakdown: { type: 'boolean', default: false },
    runner: { type: 'string', default: join(REPO, 'dist/captf-runner.mjs') },
    terraform: { type: 'string', default: 'terraform' },
    'json-out': { type: 'string' },
  },
});
const SIZE = parseModuleSize(opts.size);
const MIB = Number(opts.mib);
const ROUNDS = Number(opts.rounds);
const POLICY_ROUNDS = Number(opts['policy-rounds']);
if (!(MIB > 0) || !Number.isInteger(ROUNDS) || ROUNDS < 1 || !Number.isInteger(POLICY_ROUNDS) || POLICY_ROUNDS < 1)
  throw new Error('--mib, --rounds and --policy-rounds take positive numbers');

const MiB = 2 ** 20;

// ---------------------------------------------------------------------------------------------
// 1. The apply, and the text terraform printed through the runner.

interface Apply {
  wallMs: number;
  cpuMs: number;
  /** terraform's lines as the runner printed them, without their `| `. */
  terraformLines: string[];
  terraformBytes: number;
}

function runnerApply(dir: string): Apply {
  const usage = join(dir, 'rusage.txt');
  const args = [
    join(REPO, 'bench/rusage.py'),
    usage,
    process.execPath,
    resolve(opts.runner),
    'apply',
    '--kind',
    'cluster',
    '--module',
    join(dir, 'module'),
    '--inputs',
    join(dir, 'inputs'),
    '--state',
    join(dir, 'runner.tfstate'),
    '--out',
    join(dir, 'out'),
    '--termination-log',
    join(dir, 'termination-log'),
    '--log-format',
    'json',
    '--terraform',
    opts.terraform,
    '--image',
    'bench',
  ];
  const run = spawnSync('python3', args, {
    env: cleanEnv(),
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 1024 * MiB,
    encoding: 'utf8',
  });
  const result = JSON.parse(readFileSync(join(dir, 'out/result.json'), 'utf8')) as Record<string, unknown>;
  if (run.status !== 0 || result.outcome !== 'noChanges')
    throw new Error(`the apply ended ${result.outcome} (exit ${run.status}): ${String(run.stderr).slice(-2000)}`);
  const [, wallUs, userUs, systemUs] = readFileSync(usage, 'utf8').trim().split(' ').map(Number);
  const terraformLines = run.stdout
    .split('\n')
    .filter((line) => line.startsWith('| ') || line === '|')
    .map((line) => line.slice(2));
  return {
    wallMs: wallUs! / 1000,
    cpuMs: (userUs! + systemUs!) / 1000,
    terraformLines,
    terraformBytes: Buffer.byteLength(terraformLines.join('\n')),
  };
}

/** The module and its state, the first (untimed) run made: a timed run of the same no-change apply at each call. */
function applyBench(): { timed: () => Apply; done: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'captf-bench-masking-'));
  mkdirSync(join(dir, 'module'));
  mkdirSync(join(dir, 'inputs'));
  mkdirSync(join(dir, 'out'));
  writeFileSync(join(dir, 'module/main.tf'), moduleText(SIZE));
  writeFileSync(join(dir, 'runner.tfstate'), stateText(SIZE, 'g0'));
  writeFileSync(join(dir, 'inputs/terraform.tfvars.json'), JSON.stringify({ gen: 'g0' }));
  try {
    runnerApply(dir); // untimed: records the runner's inputs hash in the state
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    timed() {
      const apply = runnerApply(dir);
      console.log(
        `apply, ${SIZE.resources * SIZE.instances} instances, no changes (load ${loadavg()}): wall ${(apply.wallMs / 1000).toFixed(2)} s, CPU ${(apply.cpuMs / 1000).toFixed(2)} s; terraform printed ${apply.terraformLines.length} lines, ${(apply.terraformBytes / MiB).toFixed(2)} MiB`,
      );
      return apply;
    },
    done: () => rmSync(dir, { recursive: true, force: true }),
  };
}

// ---------------------------------------------------------------------------------------------
// 2. The masking boundary.

const SECRETS = [
  'hunter2-correct-horse-battery',
  'p@ssw0rd!Zq8#rT5vW2',
  'Xk9mQ2vL7pR4tY8wB3nJ6cF1',
  'ghp_4f1c2e9b8a7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b',
  'postgres://app:s3cr3t-Pa55word@db.internal:5432/app?sslmode=require',
  '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\nq3pL0mZ8Yk2Vt5wHs9JfRn4Ue1cXo7Ga6Db2Ki8Mj3Pl0Nq5Rs9T\n-----END PRIVATE KEY-----',
  '{"username":"svc-deploy","api_key":"AKIA5EXAMPLE7SECRET9KEY"}',
  'token-7d3f9a2b1c8e4f6a',
];

/** The lines of `text` repeated to `bytes`, with SECRETS[k % 8]'s first line written into every 1,000th line. */
function maskingInput(lines: readonly string[], bytes: number, withSecrets: boolean) {
  const out: string[] = [];
  let size = 0;
  let planted = 0;
  for (let i = 0; size < bytes; i++) {
    let line = lines[i % lines.length]!;
    if (withSecrets && i % 1000 === 999) {
      line = `${line} ${SECRETS[planted % SECRETS.length]!.split('\n')[0]}`;
      planted++;
    }
    out.push(line);
    size += line.length + 1;
  }
  return { lines: out, bytes: size, planted };
}

function maskOnce(lines: readonly string[], withSecrets: boolean) {
  const masker = new Masker();
  if (withSecrets) SECRETS.forEach((secret, i) => masker.add(secret, `secret ${i}`));
  const boundary = new LineMasker(masker);
  const started = ownCpuMs();
  const out: string[] = [];
  for (let i = 0; i < lines.length; i += 64) {
    const released = boundary.push(...lines.slice(i, i + 64));
    if (released !== undefined) out.push(released);
  }
  const last = boundary.end();
  if (last !== undefined) out.push(last);
  const ms = ownCpuMs() - started;
  return { ms, text: out.join('\n') };
}

interface Masking {
  secrets: number;
  bytes: number;
  msPerMiB: number;
  roundsMs: number[];
}

function benchMasking(source: readonly string[]): Masking[] {
  const rows: Masking[] = [];
  for (const withSecrets of [false, true]) {
    const input = maskingInput(source, MIB * MiB, withSecrets);
    const roundsMs: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const { ms, text } = maskOnce(input.lines, withSecrets);
      roundsMs.push(ms);
      // What was measured did the work: every planted secret masked, none left.
      const masks = text.split(MASK).length - 1;
      if (withSecrets && masks < input.planted) throw new Error(`${masks} masks for ${input.planted} planted secrets`);
      for (const secret of SECRETS) if (text.includes(secret.split('\n')[0]!)) throw new Error('a secret came through');
    }
    const row = {
      secrets: withSecrets ? SECRETS.length : 0,
      bytes: input.bytes,
      msPerMiB: medianOf(roundsMs) / (input.bytes / MiB),
      roundsMs,
    };
    rows.push(row);
    console.log(
      `masking, ${row.secrets} secrets, ${(row.bytes / MiB).toFixed(1)} MiB of terraform's text in batches of 64 lines: ${row.msPerMiB.toFixed(1)} ms of CPU a MiB (rounds ${roundsMs.map((ms) => ms.toFixed(0)).join(', ')} ms)`,
    );
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------
// 3. The policy.

const MODES = ['judged', 'evaluator', 'metered', 'library', 'bindings'] as const;
type Mode = (typeof MODES)[number];

interface Policy {
  side: 'this' | 'baseline';
  mode: Mode;
  rules: number;
  changes: number;
  /** Medians over the processes of each one's first evaluation (CEL's code not yet optimised, as in a run) and of its later ones. */
  coldMs: number;
  warmMs: number;
  coldsMs: number[];
  warmsMs: number[];
  units: number | undefined;
}

function policyRound(src: string, mode: Mode, rules: number): { coldMs: number; warmMs: number; units?: number } {
  const run = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      join(REPO, 'bench/policy-round.ts'),
      '--src',
      src,
      '--mode',
      mode,
      '--rules',
      String(rules),
      '--changes',
      '10000',
      '--rounds',
      '5',
    ],
    { cwd: REPO, env: cleanEnv(), encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
  );
  if (run.status !== 0)
    throw new Error(`bench/policy-round.ts --src ${src} --mode ${mode}: ${run.stderr.slice(-2000)}`);
  return JSON.parse(run.stdout.trim().split('\n').at(-1)!);
}

function benchPolicy(): Policy[] {
  const sides: { side: Policy['side']; src: string }[] = [{ side: 'this', src: REPO }];
  if (opts.baseline) sides.push({ side: 'baseline', src: resolve(opts.baseline) });
  const cases: { mode: Mode; rules: number }[] = [
    { mode: 'judged', rules: 2 },
    { mode: 'judged', rules: 20 },
    ...(opts.breakdown ? MODES.filter((mode) => mode !== 'judged').map((mode) => ({ mode, rules: 20 })) : []),
  ];
  const runs = new Map<string, { coldMs: number; warmMs: number; units?: number }[]>();
  const key = (side: string, mode: Mode, rules: number) => `${side} ${mode} ${rules}`;
  for (let round = 0; round < POLICY_ROUNDS; round++) {
    for (const { mode, rules } of cases) {
      // Interleaved: each round alternates which side goes first.
      for (const { side, src } of round % 2 ? [...sides].reverse() : sides) {
        const k = key(side, mode, rules);
        runs.set(k, [...(runs.get(k) ?? []), policyRound(src, mode, rules)]);
      }
    }
    console.log(`policy, round ${round + 1} of ${POLICY_ROUNDS} (load ${loadavg()})`);
  }
  const rows: Policy[] = [];
  for (const { mode, rules } of cases)
    for (const { side } of sides) {
      const done = runs.get(key(side, mode, rules))!;
      const units = done[0]!.units;
      if (done.some((run) => run.units !== units)) throw new Error(`${side} ${mode}: the units differ between runs`);
      const row: Policy = {
        side,
        mode,
        rules,
        changes: 10_000,
        coldMs: medianOf(done.map((run) => run.coldMs)),
        warmMs: medianOf(done.map((run) => run.warmMs)),
        coldsMs: done.map((run) => run.coldMs),
        warmsMs: done.map((run) => run.warmMs),
        units,
      };
      rows.push(row);
      console.log(
        `policy (${side}${side === 'baseline' ? `: ${opts.baseline}` : ''}), ${mode}, ${rules} example rules over 10,000 creates: ${row.coldMs.toFixed(0)} ms of CPU cold, ${row.warmMs.toFixed(0)} ms warm (cold ${row.coldsMs.map((ms) => ms.toFixed(0)).join(', ')} ms)${units === undefined ? '' : `, ${units.toLocaleString('en-US')} units`}`,
      );
    }
  const [judged, base] = ['this', 'baseline'].map((side) => rows.filter((r) => r.side === side && r.mode === 'judged'));
  if (base?.length && judged!.some((row, i) => row.units !== base[i]!.units))
    throw new Error('the two sides spent different units: a change of the metering, not of its speed');
  return rows;
}

// ---------------------------------------------------------------------------------------------

const bench = applyBench();
let applies: Apply[];
let masking: Masking[];
let policy: Policy[];
try {
  const before = bench.timed();
  masking = benchMasking(before.terraformLines.length > 0 ? before.terraformLines : ['(no text)']);
  policy = benchPolicy();
  applies = [before, bench.timed()];
} finally {
  bench.done();
}
const apply = { cpuMs: (applies[0]!.cpuMs + applies[1]!.cpuMs) / 2, terraformBytes: applies[0]!.terraformBytes };
const withSecrets = masking.find((row) => row.secrets > 0)!;
const maskingMs = withSecrets.msPerMiB * (apply.terraformBytes / MiB);
const share = (ms: number) => `${((100 * ms) / apply.cpuMs).toFixed(2)} %`;
const judged = (side: Policy['side'], rules: number) =>
  policy.find((row) => row.side === side && row.mode === 'judged' && row.rules === rules);
for (const side of ['this', 'baseline'] as const) {
  const [two, twenty] = [judged(side, 2), judged(side, 20)];
  if (!two || !twenty) continue;
  console.log(
    `${side}: beside the apply's ${(apply.cpuMs / 1000).toFixed(2)} s of CPU (${applies.map((a) => (a.cpuMs / 1000).toFixed(2)).join(' and ')} s): masking its ${(apply.terraformBytes / MiB).toFixed(2)} MiB ${maskingMs.toFixed(0)} ms (${share(maskingMs)}); ` +
      `2 rules over 10,000 changes ${two.coldMs.toFixed(0)} ms cold (${share(two.coldMs)}), 20 rules ${twenty.coldMs.toFixed(0)} ms cold (${share(twenty.coldMs)}); both, with 20 rules: ${share(maskingMs + twenty.coldMs)}`,
  );
}
if (opts['json-out'])
  writeFileSync(
    opts['json-out'],
    `${JSON.stringify(
      {
        date: new Date().toISOString(),
        node: process.version,
        loadavgAtEnd: loadavg(),
        size: SIZE,
        baseline: opts.baseline,
        applies: applies.map(({ wallMs, cpuMs, terraformBytes }) => ({ wallMs, cpuMs, terraformBytes })),
        masking,
        policy,
        shareOfApply: Object.fromEntries(
          (['this', 'baseline'] as const)
            .filter((side) => judged(side, 20))
            .map((side) => [
              side,
              {
                masking: maskingMs / apply.cpuMs,
                policy2: judged(side, 2)!.coldMs / apply.cpuMs,
                policy20: judged(side, 20)!.coldMs / apply.cpuMs,
                both: (maskingMs + judged(side, 20)!.coldMs) / apply.cpuMs,
              },
            ]),
        ),
      },
      null,
      2,
    )}\n`,
  );
