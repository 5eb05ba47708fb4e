#!/usr/bin/env node
// A `terraform` that is the real terraform (1.11 here) with the plan documents of a newer one:
// every command goes to the real binary, and only what the environment asks for changes. Newer
// terraform and OpenTofu cannot be installed on these machines; this is how the runner meets their
// plan shapes end to end, with real state. Test-only.
//
// Environment
//   NEWER_TF_REAL        the real terraform (default: `terraform` on PATH)
//   NEWER_TF_LOG         append one JSON line per command: {"argv": [...]} (before it runs)
//   NEWER_TF_SHOW_ADD    a file holding a JSON object: `show -json PLANFILE` prints the real plan
//                        document with these top-level keys added (replacing any the real one has)
//   NEWER_TF_PLAN_EXIT   `plan -detailed-exitcode` exits with this code (0 or 2) whenever the real
//                        plan succeeded (exit 0 or 2); a failed plan keeps its code
//   NEWER_TF_VERSION     the version `version` and `version -json` report
import { spawnSync } from 'node:child_process';
import { appendFileSync, fstatSync, readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const env = process.env;
const real = env.NEWER_TF_REAL || 'terraform';
if (env.NEWER_TF_LOG) appendFileSync(env.NEWER_TF_LOG, JSON.stringify({ argv: args }) + '\n');

const command = args.find((a) => !a.startsWith('-'));
const isShowPlan = command === 'show' && args.includes('-json') && args.at(-1) !== 'show' && !args.at(-1).startsWith('-');
const isVersion = command === 'version' || args.includes('-version') || args.includes('--version');
const captures = (isShowPlan && env.NEWER_TF_SHOW_ADD) || (isVersion && env.NEWER_TF_VERSION);

/** Whether this process holds descriptor `fd`. */
const isOpen = (fd) => {
  try {
    fstatSync(fd);
    return true;
  } catch {
    return false;
  }
};
// The real terraform's own stdin, stderr (and stdout, unless it is edited) are passed through, and
// so is descriptor 3 (the runner hands terraform the saved plan as /dev/fd/3).
const run = spawnSync(real, args, { stdio: ['inherit', captures ? 'pipe' : 'inherit', 'inherit', isOpen(3) ? 3 : 'ignore'], maxBuffer: 1 << 30 });
if (run.error) {
  process.stderr.write(`newer-terraform: cannot run ${real}: ${run.error.message}\n`);
  process.exit(97);
}
let status = run.status ?? 1;

if (captures && status === 0) {
  let out = run.stdout.toString('utf8');
  if (isShowPlan) out = JSON.stringify({ ...JSON.parse(out), ...JSON.parse(readFileSync(env.NEWER_TF_SHOW_ADD, 'utf8')) }) + '\n';
  else out = out.replace(/("terraform_version":\s*")[^"]+"/, `$1${env.NEWER_TF_VERSION}"`).replace(/^(Terraform v)\S+/m, `$1${env.NEWER_TF_VERSION}`);
  process.stdout.write(out);
} else if (captures) process.stdout.write(run.stdout);

if (command === 'plan' && args.includes('-detailed-exitcode') && env.NEWER_TF_PLAN_EXIT && (status === 0 || status === 2)) status = Number(env.NEWER_TF_PLAN_EXIT);
process.exit(status);
