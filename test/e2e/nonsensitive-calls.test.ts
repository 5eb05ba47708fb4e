// What a module declassifies is named for review (issue 41 item 5): each call of nonsensitive(), in
// the root module or a child module's file, by file and line, in contract check (a warning: the
// module still passes) and in every op's notices (NonsensitiveCalls: the result, the log, the
// summaries). The real terraform 1.11.4 runs the module.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { explain, runRunner, scenario } from '../support/runner.ts';

const MODULE = {
  'main.tf': `variable "pw" { type = string }

module "db" {
  source = "./modules/db"
  pw     = var.pw
}
`,
  'modules/db/main.tf': `variable "pw" {
  type      = string
  sensitive = true
}

resource "terraform_data" "db" { input = "db" }

output "x" { value = nonsensitive(var.pw) }
`,
};
const CALL = 'modules/db/main.tf:8';

describe('the calls of nonsensitive() named for review', () => {
  it("a child module's output `nonsensitive(var.pw)`: contract check warns at its file and line, and passes the check", async (t) => {
    const s = await scenario(t, MODULE);
    const run = await runRunner(['contract', 'check', '--module', s.module, '--json']);
    const report = JSON.parse(run.stdout) as {
      checks: { name: string; status: string; message: string; warnings?: string[] }[];
    };
    const check = report.checks.find((c) => c.name === 'nonsensitive');
    assert.ok(check, run.stdout);
    assert.equal(check.status, 'pass', 'declassifying is allowed');
    assert.match(
      check.message,
      /^1 call of nonsensitive\(\), each named in a warning: it declassifies a sensitive value/,
    );
    assert.deepEqual(check.warnings, [`${CALL}: nonsensitive() declassifies a sensitive value`]);
    const table = await runRunner(['contract', 'check', '--module', s.module]);
    assert.match(table.stdout, new RegExp(`warn: ${CALL}: nonsensitive\\(\\) declassifies a sensitive value`));
  });

  it('an apply names the call in result.notices (NonsensitiveCalls), the warnings, the log and both summaries; a module without one gets no such notice', async (t) => {
    const s = await scenario(t, MODULE);
    await s.setInputs({ 'sensitive.tfvars.json': { pw: 'Declassified-Pw-7q9' } });
    const summary = join(s.dir, 'summary.md');
    const run = await s.run('apply', ['--summary-md', summary]);
    assert.equal(run.exitCode, 0, explain(run));
    const notice = run.result!.notices?.find((n) => n.code === 'NonsensitiveCalls');
    assert.ok(notice, JSON.stringify(run.result!.notices));
    assert.match(
      notice.message,
      new RegExp(
        `^the module calls nonsensitive\\(\\) once, at ${CALL}: it declassifies a sensitive value: terraform prints`,
      ),
    );
    assert.ok(run.result!.warnings.includes(notice.message));
    assert.ok(run.stdout.includes(`warning: ${notice.message}`), run.stdout);
    const logged = run.stderr
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: number | string; msg: string });
    assert.ok(
      logged.some((line) => line.msg === notice.message),
      run.stderr,
    );
    assert.ok((await readFile(summary, 'utf8')).includes(`at ${CALL}:`), 'the Markdown summary');
    assert.ok(
      !run.allBytes.includes('Declassified-Pw-7q9'),
      'the value itself is still masked where terraform prints it',
    );

    await s.useModule({ 'main.tf': 'resource "terraform_data" "db" { input = "db" }\n' });
    const plain = await s.run('plan');
    assert.equal(plain.exitCode, 0, explain(plain));
    assert.ok(!plain.result!.notices?.some((n) => n.code === 'NonsensitiveCalls'), JSON.stringify(plain.result));
  });
});
