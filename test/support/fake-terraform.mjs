#!/usr/bin/env node
// A fake `terraform` for fault tests: behaves like terraform 1.11 as far as the runner's driver can
// tell, and misbehaves on request. Test-only; driven entirely by environment variables.
//
// Commands (the step name used in FAKE_TF_FAULT is in brackets)
//   version [-json]                  [version]      "Terraform vX" / {"terraform_version":X,...}; also -version, --version
//   init [-json] ...                 [init]         creates .terraform/ and its backend record (terraform.tfstate), prints the success line
//   validate [-json]                 [validate]     valid, no diagnostics
//   plan [-detailed-exitcode] [-out=FILE] [-json] ...
//                                    [plan]         writes the plan document to FILE (the fake's plan file IS the
//                                                   JSON); exit 2 with -detailed-exitcode when it changes anything
//   show -json [FILE]                [show]         prints FILE's plan document (no FILE: an empty state document)
//   apply [-auto-approve] [FILE] ... [apply]        state serial + 1, outputs taken from the plan's output_changes
//   output -json                     [output]       outputs of the state, like terraform output -json
//   state pull                       [state-pull]   prints the state (nothing when there is none)
//   state push [-force] FILE|-       [state-push]   terraform's serial/lineage rules; stores serial + 1
//   force-unlock [-force] ID         [force-unlock] "successfully unlocked"
//   Global -chdir=DIR is honoured. Unknown commands exit 1.
//
// Environment
//   FAKE_TF_LOG          append one JSON line per event: {"event":"start",step,argv,cwd,chdir,pid,pgid,env,...},
//                        {"event":"signal",signal}, {"event":"exit",code,maxRssKiB} (no exit line = died by a signal),
//                        and after each huge-* stream {"event":"streamed",step,stream,bytes,longestWrite:{from,to},
//                        readerPeakRssKiB:[after 0, 1, 2 … MiB],readerPeakRssKiBAtEnd[,resourceChanges]}: the longest
//                        a write waited on the pipe (Date.now() at its start and end), the peak RSS (VmHWM) of the
//                        parent process, the one reading the pipe (the runner), and for huge-plan the changes printed.
//                        Runs with an unknown command or a misconfigured fault are not logged
//   FAKE_TF_VERSION      version reported (default 1.11.4)
//   FAKE_TF_PLAN_JSON    file holding the plan document `plan` writes (default: generated, see next)
//   FAKE_TF_PLAN_ACTIONS actions of the generated plan's one resource change, comma-separated:
//                        create (default), update, delete, "delete,create", "create,delete", forget, no-op
//   FAKE_TF_SECRET       a value the generated plan holds as sensitive variable `secret` (raw, like terraform)
//                        and that fault leak-secret prints
//   FAKE_TF_STATE        state file (default ./terraform.tfstate after -chdir)
//   FAKE_TF_ORPHAN_PID_FILE  where fault `orphan` writes its child's pid
//   FAKE_TF_FAULT        comma-separated STEP:FAULT[=ARG]; STEP is a step name above or * for every step
//
// Faults, in the order they act
//   leak-secret          print a diagnostic quoting FAKE_TF_SECRET on stderr, then carry on
//   huge-stdout[=BYTES]  stream BYTES (default 200 MiB) of progress lines to stdout, then carry on
//   huge-stderr[=BYTES]  same on stderr
//   orphan               start `sleep 3600` in this process group and leave it behind, like a local-exec
//                        provisioner's child; its pid goes to FAKE_TF_ORPHAN_PID_FILE
//   delay=SECONDS        wait, then carry on (interrupts act as below; an interrupted wait exits 1)
//   hang                 wait until an interrupt ends it
//   ignore-first-interrupt  first SIGINT/SIGTERM: "Stopping operation..." and keep going; second: exit 1
//                        at once (terraform during a heavy plan). Waits forever unless delay= is given
//   ignore-interrupts    never exit on SIGINT/SIGTERM; only SIGKILL ends it. Waits forever unless delay=
//   exit=N               print an error diagnostic and exit N without doing the step
//   signal=NAME          kill itself with signal NAME (SIGKILL, SIGSEGV, SIGABRT, ...)
//   opentofu             (version) answer like OpenTofu (version 1.9.0 unless FAKE_TF_VERSION)
//   truncate             (show) print the first half of the plan document, exit 0
//   invalid-json         (show) print something that is not JSON, exit 0
//   huge-plan[=BYTES]    (show) print a valid plan document of about BYTES (default 200 MiB), streamed
//   errored-state        (apply) apply, but fail to persist the new state: write it to ./errored.tfstate
//                        instead, print terraform's "Failed to persist state" error and exit 1
//   Without faults, SIGINT/SIGTERM makes it print terraform's interrupt message and exit 1.
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { randomUUID } from 'node:crypto';
import { constants } from 'node:os';

const MISCONFIGURED = 97; // the test set the fake up wrongly: distinct from anything terraform exits with
const DEFAULT_HUGE_BYTES = 200 * 1024 * 1024;
const STEPS = [
  'version',
  'init',
  'validate',
  'plan',
  'show',
  'apply',
  'output',
  'state-pull',
  'state-push',
  'force-unlock',
];
const isByteCount = (arg) => /^[1-9]\d*$/.test(arg);
const FAULTS = {
  'leak-secret': { arg: 'none' },
  'huge-stdout': { arg: 'optional', check: isByteCount },
  'huge-stderr': { arg: 'optional', check: isByteCount },
  orphan: { arg: 'none' },
  delay: { arg: 'required', check: (arg) => /^\d+(\.\d+)?$/.test(arg) },
  hang: { arg: 'none' },
  'ignore-first-interrupt': { arg: 'none' },
  'ignore-interrupts': { arg: 'none' },
  exit: { arg: 'required', check: (arg) => /^\d+$/.test(arg) && Number(arg) >= 1 && Number(arg) <= 255 },
  signal: { arg: 'required', check: (arg) => arg in constants.signals },
  opentofu: { arg: 'none', steps: ['version'] },
  truncate: { arg: 'none', steps: ['show'] },
  'invalid-json': { arg: 'none', steps: ['show'] },
  'huge-plan': { arg: 'optional', steps: ['show'], check: isByteCount },
  'errored-state': { arg: 'none', steps: ['apply'] },
};

const env = process.env;
const version = env.FAKE_TF_VERSION ?? '1.11.4';

function log(record) {
  if (env.FAKE_TF_LOG) appendFileSync(env.FAKE_TF_LOG, `${JSON.stringify({ ...record, pid: process.pid })}\n`);
}

function fail(code, message) {
  process.stderr.write(`\nError: ${message}\n\n`);
  process.exit(code);
}

function misconfigured(message) {
  fail(MISCONFIGURED, `fake-terraform misconfigured: ${message}`);
}

// ---- command line ---------------------------------------------------------------------------

function parseCommandLine(argv) {
  const args = [...argv];
  let chdir;
  while (args[0]?.startsWith('-')) {
    const option = args.shift();
    if (option.startsWith('-chdir=')) chdir = option.slice('-chdir='.length);
    else if (option === '-version' || option === '--version' || option === '-v')
      return { step: 'version', args: [], chdir };
    else fail(1, `unsupported global option ${option}`);
  }
  const command = args.shift();
  if (command === 'state') {
    const sub = args.shift();
    if (sub !== 'pull' && sub !== 'push') fail(1, `unsupported command: state ${sub}`);
    return { step: `state-${sub}`, args, chdir };
  }
  if (!STEPS.includes(command)) fail(1, `unsupported command: ${command}`);
  return { step: command, args, chdir };
}

// Flags that take a value: like terraform (Go's flag package) they accept `-out=FILE` and `-out FILE`.
const VALUE_FLAGS = new Set([
  'out',
  'var',
  'var-file',
  'lock-timeout',
  'backend-config',
  'replace',
  'target',
  'parallelism',
  'state',
  'state-out',
  'backup',
]);

/** `-name=value`, `-name value` (VALUE_FLAGS) or `-name` (true); other arguments are positional. */
function parseFlags(args) {
  const flags = {};
  const positional = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith('-') || arg === '-') {
      positional.push(arg);
      continue;
    }
    const [name, ...value] = arg.replace(/^-+/, '').split('=');
    if (value.length) flags[name] = value.join('=');
    else if (VALUE_FLAGS.has(name) && i + 1 < args.length) flags[name] = args[++i];
    else flags[name] = true;
  }
  return { flags, positional };
}

function faultsFor(step) {
  const faults = new Map();
  for (const entry of (env.FAKE_TF_FAULT ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const match = /^([a-z*-]+):([a-z-]+)(?:=(.*))?$/.exec(entry);
    if (!match) misconfigured(`bad FAKE_TF_FAULT entry "${entry}" (want STEP:FAULT[=ARG])`);
    const [, faultStep, name, arg] = match;
    const spec = FAULTS[name];
    if (faultStep !== '*' && !STEPS.includes(faultStep)) misconfigured(`unknown step "${faultStep}" in "${entry}"`);
    if (!spec) misconfigured(`unknown fault "${name}" in "${entry}"`);
    if (spec.arg === 'required' && arg === undefined) misconfigured(`fault "${name}" needs =ARG`);
    if (spec.arg === 'none' && arg !== undefined) misconfigured(`fault "${name}" takes no argument`);
    if (spec.check && arg !== undefined && !spec.check(arg)) misconfigured(`bad argument in "${entry}"`);
    if (spec.steps && faultStep !== '*' && !spec.steps.includes(faultStep)) {
      misconfigured(`fault "${name}" only applies to ${spec.steps.join(', ')}`);
    }
    if ((faultStep === step || faultStep === '*') && (!spec.steps || spec.steps.includes(step))) faults.set(name, arg);
  }
  return faults;
}

// ---- interrupts and waiting -----------------------------------------------------------------

let interrupts = 0;

function handleInterrupts(faults) {
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, () => {
      interrupts++;
      log({ event: 'signal', signal, at: Date.now() });
      if (faults.has('ignore-interrupts')) {
        process.stderr.write('Interrupt received.\nPlease wait for Terraform to exit or data loss may occur.\n');
      } else if (interrupts === 1 && faults.has('ignore-first-interrupt')) {
        process.stderr.write(
          'Interrupt received.\nPlease wait for Terraform to exit or data loss may occur.\n' +
            'Gracefully shutting down...\nStopping operation...\n',
        );
      } else if (interrupts === 1) {
        process.stderr.write(
          'Interrupt received.\nPlease wait for Terraform to exit or data loss may occur.\n' +
            'Gracefully shutting down...\n',
        );
        fail(1, 'execution halted');
      } else {
        fail(1, 'Two interrupts received. Exiting immediately. Note that data loss may have occurred.');
      }
    });
  }
}

async function wait(seconds) {
  await new Promise((resolve) => {
    if (Number.isFinite(seconds)) setTimeout(resolve, seconds * 1000);
    else setInterval(() => {}, 1 << 30); // keeps the event loop alive until a signal ends the process
  });
  if (interrupts > 0) fail(1, 'operation canceled');
}

// ---- output ---------------------------------------------------------------------------------

const MiB = 1024 * 1024;

/** The peak RSS (KiB) of the process that started this one and reads its output (the runner), or null. */
function readerPeakRssKiB() {
  try {
    return Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${process.ppid}/status`, 'utf8'))[1]);
  } catch {
    return null;
  }
}

/**
 * Writes chunks from `next()` until it returns undefined, honouring backpressure: never buffers it
 * all. Returns what a test proves backpressure and bounded memory with: the bytes, the longest a
 * write was blocked on the pipe, and the reader's peak RSS after every MiB and at the end.
 */
async function stream(out, next) {
  let bytes = 0;
  let longestWrite = { from: 0, to: 0 };
  const peaks = [readerPeakRssKiB()];
  for (let chunk = next(); chunk !== undefined; chunk = next()) {
    const from = Date.now();
    if (!out.write(chunk)) await once(out, 'drain');
    const to = Date.now();
    if (to - from > longestWrite.to - longestWrite.from) longestWrite = { from, to };
    bytes += Buffer.byteLength(chunk);
    while (bytes >= peaks.length * MiB) peaks.push(readerPeakRssKiB());
  }
  return { bytes, longestWrite, readerPeakRssKiB: peaks, readerPeakRssKiBAtEnd: readerPeakRssKiB() };
}

/** Streams `chunks` to `out` and logs how it went (the `streamed` event). */
async function streamLogged(step, name, out, chunks, extra = () => ({})) {
  const streamed = await stream(out, chunks);
  log({ event: 'streamed', step, stream: name, ...streamed, ...extra() });
}

function fillerLines(totalBytes) {
  let written = 0;
  let line = 0;
  return () => {
    if (written >= totalBytes) return undefined;
    const text = `terraform_data.filler[${line++}]: Still creating... [10s elapsed] ${'.'.repeat(80)}\n`.repeat(100);
    written += text.length;
    return text;
  };
}

/** A valid plan document of about totalBytes: creates of terraform_data.huge[N], 100 per chunk; `changes()` counts them. */
function hugePlanChunks(totalBytes) {
  let phase = 'head';
  let written = 0;
  let index = 0;
  const next = () => {
    let text;
    if (phase === 'head') {
      phase = 'body';
      text = `{"format_version":"1.2","terraform_version":${JSON.stringify(version)},"planned_values":{"root_module":{}},"resource_changes":[`;
    } else if (phase === 'body' && written < totalBytes) {
      const entries = Array.from({ length: 100 }, () => index++).map((i) =>
        JSON.stringify(resourceChange(`terraform_data.huge[${i}]`, ['create'], { padding: 'x'.repeat(900) })),
      );
      text = `${index > 100 ? ',' : ''}${entries.join(',')}`;
    } else if (phase === 'body') {
      phase = 'done';
      text = `],"configuration":{"root_module":{}},"applyable":true,"complete":true,"errored":false,"timestamp":"${new Date().toISOString()}"}\n`;
    }
    if (text !== undefined) written += text.length;
    return text;
  };
  return { next, changes: () => index };
}

/** A line of human output, or with -json one machine-readable UI line like terraform's. */
function say(flags, message, type) {
  process.stdout.write(
    flags.json
      ? `${JSON.stringify({ '@level': 'info', '@message': message, '@module': 'terraform.ui', '@timestamp': new Date().toISOString(), type })}\n`
      : `${message}\n`,
  );
}

// ---- documents ------------------------------------------------------------------------------

function resourceChange(address, actions, input) {
  const [, name, key] = /^terraform_data\.([a-z_]+)(?:\[(\d+)\])?$/.exec(address);
  const creating = actions.includes('create') && !actions.includes('delete');
  const before = creating ? null : { id: 'fake-id', input: actions[0] === 'no-op' ? input : 'old' };
  const after = actions.includes('delete') && !actions.includes('create') ? null : { input };
  return {
    address,
    mode: 'managed',
    type: 'terraform_data',
    name,
    ...(key === undefined ? {} : { index: Number(key) }),
    provider_name: 'terraform.io/builtin/terraform',
    change: {
      actions,
      before,
      after,
      after_unknown: after ? { id: true, output: true } : false,
      before_sensitive: false,
      after_sensitive: after ? {} : false,
    },
    ...(actions.length === 2 ? { action_reason: 'replace_because_cannot_update' } : {}),
  };
}

function generatedPlan() {
  const actions = (env.FAKE_TF_PLAN_ACTIONS ?? 'create').split(',').map((s) => s.trim());
  const noChanges = actions.every((action) => action === 'no-op');
  const secret = env.FAKE_TF_SECRET;
  return {
    format_version: '1.2',
    terraform_version: version,
    ...(secret === undefined ? {} : { variables: { secret: { value: secret } } }),
    planned_values: { root_module: {} },
    resource_changes: [resourceChange('terraform_data.fake', actions, 'fake')],
    output_changes: {
      cluster_name: {
        actions: [noChanges ? 'no-op' : 'create'],
        before: noChanges ? 'fake-cluster' : null,
        after: 'fake-cluster',
        after_unknown: false,
        before_sensitive: false,
        after_sensitive: false,
      },
    },
    configuration: {
      root_module: secret === undefined ? {} : { variables: { secret: { sensitive: true } } },
    },
    applyable: true,
    complete: true,
    errored: false,
    timestamp: new Date().toISOString(),
  };
}

/**
 * What init records in .terraform/terraform.tfstate, as terraform 1.11 does: the backend of the
 * last `*override.tf` that has one, else of any other .tf file (read with a pattern, not a parser:
 * `backend "TYPE"` and a `path = "…"` in the same file); a local backend without one.
 */
function backendRecord() {
  const files = readdirSync('.')
    .filter((name) => name.endsWith('.tf'))
    .sort();
  const withBackend = files
    .map((name) => ({ name, text: readFileSync(name, 'utf8') }))
    .filter((file) => /\bbackend\s+"[^"]+"/.test(file.text));
  const chosen = withBackend.filter((file) => /(^|_)override\.tf$/.test(file.name)).at(-1) ?? withBackend[0];
  const type = chosen ? /\bbackend\s+"([^"]+)"/.exec(chosen.text)[1] : 'local';
  const path = chosen && /\bpath\s*=\s*("(?:[^"\\]|\\.)*")/.exec(chosen.text)?.[1];
  const config = type === 'local' ? { path: path ? JSON.parse(path) : null, workspace_dir: null } : {};
  return { version: 3, terraform_version: version, backend: { type, config, hash: 0 } };
}

/** The plan document `plan` writes (and `apply` without a plan file applies). */
function planDocumentText() {
  return env.FAKE_TF_PLAN_JSON ? readFileSync(env.FAKE_TF_PLAN_JSON, 'utf8') : JSON.stringify(generatedPlan());
}

function planChangesSomething(plan) {
  const changes = [
    ...(plan.resource_changes ?? []),
    ...Object.values(plan.output_changes ?? {}).map((change) => ({ change })),
  ];
  return changes.some(({ change }) => change.actions.some((action) => action !== 'no-op' && action !== 'read'));
}

function readState(path) {
  return existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : undefined;
}

function writeState(path, state) {
  writeFileSync(path, `${JSON.stringify(state, null, 2)}\n`);
}

/** The type terraform output -json reports for a value. */
function typeOf(value) {
  if (typeof value === 'string') return 'string';
  if (typeof value === 'number') return 'number';
  if (typeof value === 'boolean') return 'bool';
  if (Array.isArray(value)) return ['tuple', value.map(typeOf)];
  if (value === null) return 'dynamic';
  return ['object', Object.fromEntries(Object.entries(value).map(([k, v]) => [k, typeOf(v)]))];
}

// ---- steps ----------------------------------------------------------------------------------

const steps = {
  version({ flags }, faults) {
    const tofu = faults.has('opentofu');
    const reported = tofu ? (env.FAKE_TF_VERSION ?? '1.9.0') : version;
    if (flags.json) {
      const doc = { terraform_version: reported, platform: 'linux_amd64', provider_selections: {} };
      process.stdout.write(`${JSON.stringify(tofu ? doc : { ...doc, terraform_outdated: false }, null, 2)}\n`);
    } else {
      process.stdout.write(`${tofu ? 'OpenTofu' : 'Terraform'} v${reported}\non linux_amd64\n`);
    }
  },

  init({ flags }) {
    mkdirSync('.terraform', { recursive: true });
    writeFileSync('.terraform/terraform.tfstate', `${JSON.stringify(backendRecord(), null, 2)}\n`);
    say(flags, 'Terraform has been successfully initialized!', 'init_output');
  },

  validate({ flags }) {
    process.stdout.write(
      flags.json
        ? `${JSON.stringify({ format_version: '1.0', valid: true, error_count: 0, warning_count: 0, diagnostics: [] }, null, 2)}\n`
        : 'Success! The configuration is valid.\n',
    );
  },

  plan({ flags }) {
    const planText = planDocumentText();
    const changes = planChangesSomething(JSON.parse(planText));
    if (typeof flags.out === 'string') writeFileSync(flags.out, planText);
    say(
      flags,
      changes ? 'Plan: changes (fake-terraform)' : 'No changes. Your infrastructure matches the configuration.',
      'change_summary',
    );
    process.exit(changes && flags['detailed-exitcode'] ? 2 : 0);
  },

  async show({ flags, positional }, faults) {
    if (!flags.json) fail(1, 'fake-terraform only supports show -json');
    if (faults.has('huge-plan')) {
      const plan = hugePlanChunks(Number(faults.get('huge-plan') ?? DEFAULT_HUGE_BYTES));
      return streamLogged('show', 'stdout', process.stdout, plan.next, () => ({ resourceChanges: plan.changes() }));
    }
    if (positional.length === 0) {
      process.stdout.write(`${JSON.stringify({ format_version: '1.0', terraform_version: version })}\n`);
      return undefined;
    }
    if (!existsSync(positional[0])) fail(1, `Failed to read the given file as a state or plan file: ${positional[0]}`);
    const planText = readFileSync(positional[0], 'utf8');
    if (faults.has('truncate')) process.stdout.write(planText.slice(0, Math.floor(planText.length / 2)));
    else if (faults.has('invalid-json'))
      process.stdout.write('{"format_version":"1.2","resource_changes":[{"address": oops\n');
    else process.stdout.write(`${planText}\n`);
    return undefined;
  },

  apply({ flags, positional }, faults, statePath) {
    const planFile = positional[0];
    if (planFile !== undefined && !existsSync(planFile)) fail(1, `Failed to load "${planFile}" as a plan file`);
    const plan = JSON.parse(planFile === undefined ? planDocumentText() : readFileSync(planFile, 'utf8'));
    const previous = readState(statePath);
    const outputs = { ...previous?.outputs };
    for (const [name, change] of Object.entries(plan.output_changes ?? {})) {
      if (change.actions.includes('delete') && !change.actions.includes('create')) delete outputs[name];
      else
        outputs[name] = {
          value: change.after,
          type: typeOf(change.after),
          ...(change.after_sensitive ? { sensitive: true } : {}),
        };
    }
    const applied = {
      version: 4,
      terraform_version: version,
      serial: (previous?.serial ?? 0) + 1,
      lineage: previous?.lineage ?? randomUUID(),
      outputs,
      resources: previous?.resources ?? [],
      check_results: null,
    };
    if (faults.has('errored-state')) {
      writeState('errored.tfstate', applied);
      fail(
        1,
        'Failed to persist state to backend\n\nThe error shown above has prevented Terraform from writing the updated state to\nthe configured backend. To allow for recovery, the state has been written to\nthe file "errored.tfstate" in the current working directory.',
      );
    }
    writeState(statePath, applied);
    say(flags, 'Apply complete! (fake-terraform)', 'change_summary');
  },

  output({ flags }, _faults, statePath) {
    if (!flags.json) fail(1, 'fake-terraform only supports output -json');
    const outputs = readState(statePath)?.outputs ?? {};
    const shown = Object.fromEntries(
      Object.entries(outputs).map(([name, o]) => [
        name,
        { sensitive: Boolean(o.sensitive), type: o.type, value: o.value },
      ]),
    );
    process.stdout.write(`${JSON.stringify(shown, null, 2)}\n`);
  },

  'state-pull'(_args, _faults, statePath) {
    if (existsSync(statePath)) process.stdout.write(readFileSync(statePath, 'utf8'));
  },

  'state-push'({ flags, positional }, _faults, statePath) {
    const source = positional[0];
    if (source === undefined) fail(1, 'Exactly one argument expected: the path to a state file');
    let pushed;
    try {
      pushed = JSON.parse(readFileSync(source === '-' ? 0 : source, 'utf8'));
    } catch {
      fail(1, 'Unsupported state file format: the given state file could not be read');
    }
    const current = readState(statePath);
    if (current && !flags.force) {
      if (pushed.lineage !== current.lineage) {
        fail(
          1,
          `cannot import state with lineage "${pushed.lineage}" over unrelated state with lineage "${current.lineage}"`,
        );
      }
      if (pushed.serial < current.serial) {
        fail(1, `cannot import state with serial ${pushed.serial} over newer state with serial ${current.serial}`);
      }
      if (pushed.serial === current.serial) {
        if (JSON.stringify(pushed) === JSON.stringify(current)) return;
        fail(
          1,
          `cannot overwrite existing state with serial ${current.serial} with a different state that has the same serial`,
        );
      }
    }
    writeState(statePath, { ...pushed, serial: pushed.serial + 1 });
  },

  'force-unlock'({ positional }) {
    if (positional.length !== 1) fail(1, 'force-unlock expects exactly one argument: the lock ID');
    process.stdout.write('Terraform state has been successfully unlocked!\n');
  },
};

// ---- main -----------------------------------------------------------------------------------

function processGroupId() {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
}

const { step, args, chdir } = parseCommandLine(process.argv.slice(2));
const faults = faultsFor(step);
// Before the start line: a test that has seen the line may signal at once.
handleInterrupts(faults);
log({
  event: 'start',
  step,
  argv: process.argv.slice(2),
  cwd: process.cwd(),
  chdir: chdir ?? null,
  pgid: processGroupId(),
  env: Object.fromEntries(
    ['TF_IN_AUTOMATION', 'TF_INPUT', 'TF_CLI_CONFIG_FILE', 'TF_LOG', 'TF_WORKSPACE', 'TF_DATA_DIR'].map((name) => [
      name,
      env[name] ?? null,
    ]),
  ),
  tfCliArgs: Object.keys(env)
    .filter((name) => name.startsWith('TF_CLI_ARGS'))
    .sort(),
  tfVars: Object.keys(env)
    .filter((name) => name.startsWith('TF_VAR_'))
    .sort(),
});
process.on('exit', (code) =>
  log({ event: 'exit', step, code, maxRssKiB: process.resourceUsage().maxRSS, at: Date.now() }),
);
process.stdout.on('error', () => process.exit(1)); // the reader went away (EPIPE)
// Blocking writes, like terraform's (Go): Node queues what a full pipe does not take, and every
// process.exit here would drop that queue (the last chunks of a huge output to a slow reader).
for (const out of [process.stdout, process.stderr]) out._handle?.setBlocking?.(true);
if (chdir) process.chdir(chdir);

if (faults.has('leak-secret')) {
  if (env.FAKE_TF_SECRET === undefined) misconfigured('leak-secret needs FAKE_TF_SECRET');
  process.stderr.write(
    `\nWarning: Value for undeclared variable\n\nThe root module does not declare a variable named "${env.FAKE_TF_SECRET}".\n\n`,
  );
}
for (const [fault, name, out] of [
  ['huge-stdout', 'stdout', process.stdout],
  ['huge-stderr', 'stderr', process.stderr],
]) {
  if (faults.has(fault))
    await streamLogged(step, name, out, fillerLines(Number(faults.get(fault) ?? DEFAULT_HUGE_BYTES)));
}
if (faults.has('orphan')) {
  if (!env.FAKE_TF_ORPHAN_PID_FILE) misconfigured('orphan needs FAKE_TF_ORPHAN_PID_FILE');
  const child = spawn('sleep', ['3600'], { stdio: 'ignore' });
  writeFileSync(env.FAKE_TF_ORPHAN_PID_FILE, `${child.pid}\n`);
  child.unref();
}
if (faults.has('delay')) await wait(Number(faults.get('delay')));
else if (['hang', 'ignore-first-interrupt', 'ignore-interrupts'].some((f) => faults.has(f))) await wait(Infinity);
if (faults.has('exit')) fail(Number(faults.get('exit')), `fake failure in ${step} (FAKE_TF_FAULT)`);
if (faults.has('signal')) {
  process.kill(process.pid, faults.get('signal'));
  await wait(Infinity); // delivery is asynchronous: do nothing more until it lands
}

const parsed = parseFlags(args);
await steps[step](parsed, faults, env.FAKE_TF_STATE ?? 'terraform.tfstate');
process.exit(0);
