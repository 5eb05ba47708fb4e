// The two commands of newer-terraform.sh (the wrapper, and its table of what it changes) whose
// output is edited: `node newer-terraform.mjs show-add|version REAL ARGS...` runs the real terraform
// REAL with ARGS and prints its stdout edited, with its exit code. Test-only.
//   show-add   `show -json PLANFILE`: the real plan document with the top-level keys of the JSON
//              object in NEWER_TF_SHOW_ADD added (replacing any the real one has)
//   version    `version` and `version -json` report NEWER_TF_VERSION
import { spawnSync } from 'node:child_process';
import { fstatSync, readFileSync } from 'node:fs';

const [mode, real, ...args] = process.argv.slice(2);
const env = process.env;

/** Whether this process holds descriptor `fd`. */
const isOpen = (fd) => {
  try {
    fstatSync(fd);
    return true;
  } catch {
    return false;
  }
};
// The real terraform's own stdin and stderr are passed through, and so is descriptor 3 (the runner
// hands terraform the saved plan as /dev/fd/3).
const run = spawnSync(real, args, {
  stdio: ['inherit', 'pipe', 'inherit', isOpen(3) ? 3 : 'ignore'],
  maxBuffer: 1 << 30,
});
if (run.error) {
  process.stderr.write(`newer-terraform: cannot run ${real}: ${run.error.message}\n`);
  process.exit(97);
}
const status = run.status ?? 1;

if (status === 0) {
  let out = run.stdout.toString('utf8');
  if (mode === 'show-add')
    out = JSON.stringify({ ...JSON.parse(out), ...JSON.parse(readFileSync(env.NEWER_TF_SHOW_ADD, 'utf8')) }) + '\n';
  else
    out = out
      .replace(/("terraform_version":\s*")[^"]+"/, `$1${env.NEWER_TF_VERSION}"`)
      .replace(/^(Terraform v)\S+/m, `$1${env.NEWER_TF_VERSION}`);
  process.stdout.write(out);
} else process.stdout.write(run.stdout);
process.exit(status);
