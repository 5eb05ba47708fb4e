// Captures what the real terraform prints for the failures the runner has to read, into
// test/fixtures/terraform-output/<case>/: command.json (argv, terraform version, exit code and what
// the case observed), stdout.txt, stderr.txt, and for plan and validate also the -json form
// (json-stdout.txt, json-stderr.txt, its argv and exit code in command.json).
//
//   npx tsx scripts/generators/capture-terraform-output.ts                  # every case (20-40 s)
//   npx tsx scripts/generators/capture-terraform-output.ts --case NAME ...  # only these cases
//   npx tsx scripts/generators/capture-terraform-output.ts --list           # the case names
//
// The cases are in capture-terraform-output/cases.ts, the engine that runs them in
// capture-terraform-output/workdir.ts. Each case runs in a fresh temp dir laid out like the runner's
// workdir (root/ is the module and terraform's cwd, private/ holds the plan file and the variables
// files), and terraform as the runner runs it: an argument array (no shell), the runner's environment
// rules (TF_IN_AUTOMATION=1, TF_INPUT=0, CHECKPOINT_DISABLE=1) plus TF_CLI_CONFIG_FILE=/dev/null (or,
// where a case says so, the image's runner/terraformrc), with HOME in the temp dir and PATH, and
// nothing else of this environment. The temp dir's path is replaced by /WORKDIR (and a PostgreSQL
// port by PGPORT) so the files do not change with the machine's paths. The pg cases start a
// PostgreSQL 15 server with test/support/pg.ts. Terraform must be on PATH (or CAPTF_TERRAFORM names it).
import { mkdtemp, readdir, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startPostgres, type PostgresServer } from '../../test/support/pg.ts';
import { CASES } from './capture-terraform-output/cases.ts';
import { keyLine, OUT_DIR, redact, terraformVersion, Workdir, writeCase } from './capture-terraform-output/workdir.ts';

const { values } = parseArgs({ options: { case: { type: 'string', multiple: true }, list: { type: 'boolean' } } });
const names = new Set(CASES.map((c) => c.name));
if (names.size !== CASES.length) throw new Error('two cases have the same name');

if (values.list) {
  for (const c of CASES) console.log(c.name);
} else {
  const unknown = (values.case ?? []).filter((name) => !names.has(name));
  if (unknown.length > 0) throw new Error(`unknown case(s): ${unknown.join(', ')} (see --list)`);
  const selected = values.case ? CASES.filter((c) => values.case!.includes(c.name)) : CASES;

  const version = await terraformVersion();
  const started = Date.now();
  const base = await realpath(await mkdtemp(join(tmpdir(), 'captf-capture-')));
  let postgres: Promise<PostgresServer> | undefined;
  const context = { postgres: () => (postgres ??= startPostgres()) };
  console.log(`terraform ${version}; ${selected.length} case(s) into ${OUT_DIR}`);
  try {
    for (const testCase of selected) {
      const w = new Workdir(join(base, testCase.name), testCase, context);
      await w.prepare();
      const observed = await testCase.run(w);
      await writeCase(w, version, observed);
      const captured = w.captured!;
      const json = w.capturedJson ? ` (-json: ${w.capturedJson.exitCode})` : '';
      console.log(
        `${testCase.name.padEnd(48)} exit ${captured.exitCode}${json}${captured.timedOut ? ' TIMED OUT' : ''}  ${captured.ms} ms  ${redact(keyLine(captured), w.redactions)}`,
      );
    }
    if (!values.case) {
      // A full run is the whole corpus: remove the dirs of cases that no longer exist.
      for (const entry of await readdir(OUT_DIR, { withFileTypes: true })) {
        if (entry.isDirectory() && !names.has(entry.name))
          await rm(join(OUT_DIR, entry.name), { recursive: true, force: true });
      }
    }
  } finally {
    if (postgres) await (await postgres.catch(() => undefined))?.stop();
    await rm(base, { recursive: true, force: true });
  }
  console.log(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
