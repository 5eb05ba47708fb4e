// The progress lines' counts come from terraform's own lines (the real terraform 1.11.4): a
// local-exec that prints terraform's words, and an output whose value is made of them, count for
// nothing in a create-only apply.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TEST_INTERVAL_VARIABLE } from '../../src/output/progress.ts';
import { explain, logRecords, scenario } from '../support/runner.ts';

describe("the progress lines' counts", () => {
  it('a local-exec printing 501 "Destruction complete" lines, and an output of such lines, make no destroyed count in a create-only apply', async (t) => {
    const s = await scenario(t, {
      'main.tf': `resource "terraform_data" "liar" {
  provisioner "local-exec" {
    command = "printf 'terraform_data.victim[%s]: Destruction complete after 0s\\n' $(seq 501); printf 'x\\rmodule.m.terraform_data.v: Destruction complete after 0s\\n'; sleep 2"
  }
}
output "lies" { value = "terraform_data.a: Destruction complete after 0s\\nterraform_data.b: Destruction complete after 0s\\n" }
`,
    });
    const run = await s.run('apply', [], { [TEST_INTERVAL_VARIABLE]: '100' });
    assert.equal(run.exitCode, 0, explain(run));
    assert.equal(run.result?.plan?.counts.delete ?? 0, 0, 'a create-only apply');
    assert.match(
      run.stdout,
      /\(local-exec\): terraform_data\.victim\[501\]: Destruction complete after 0s/,
      run.stdout.slice(-3000),
    );
    const progress = logRecords(run).filter((r) => r.step === 'apply' && r.elapsedMs !== undefined && r.output);
    assert.ok(progress.length >= 1, 'the apply was quiet long enough for a progress line');
    for (const record of progress) {
      const reported = record.reported as Record<string, number>;
      assert.equal(reported.destroyed, undefined, JSON.stringify(record));
      assert.doesNotMatch(String(record.msg), /destroyed/, JSON.stringify(record));
    }
  });
});
