// terraform's human plan kept back while the plan runs and printed masked after it: with the real
// terraform, a plan whose text is larger than the pieces the kept lines are written to the file in.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Masker, MASK } from '../../src/masking/mask.ts';
import { maskedPlanText } from '../../src/steps/plan-text.ts';
import { StopHandle } from '../../src/terraform/stop.ts';
import { createTerraform, type TerraformOutput } from '../../src/terraform/terraform.ts';
import { resolveExecutable } from '../../src/terraform/version.ts';
import { runTestTerraform, TERRAFORM, testTerraformEnv, writeModule } from '../support/tf-modules.ts';

const SECRET = 'kept-back-secret-7f3a9c';
const INSTANCES = 400;
/** Each instance's input prints a line of ≈ 230 characters: ≈ 90 KB of plan text, more than one piece. */
const moduleTree = {
  'main.tf': `variable "secret" {
  type = string
}
resource "terraform_data" "r" {
  count = ${INSTANCES}
  input = "\${var.secret}-\${count.index}-${'x'.repeat(200)}"
}
`,
};

describe('steps: the kept-back plan text', () => {
  it('prints nothing of the plan while it runs, then every line in order, its text masked by what was learned after the plan', async (t) => {
    const dir = await writeModule(moduleTree, t);
    assert.equal((await runTestTerraform(dir, ['init', '-input=false', '-no-color'])).exitCode, 0);
    const privateDir = join(dir, '.private');
    await mkdir(privateDir, { mode: 0o700 });
    const printed: string[] = [];
    const output: TerraformOutput = {
      lines: (stream, texts) => {
        if (stream === 'stdout') printed.push(...texts);
      },
    };
    const env = testTerraformEnv();
    const tf = createTerraform({
      path: resolveExecutable(TERRAFORM, env.PATH)!,
      cwd: dir,
      env,
      output,
      stop: new StopHandle(),
    });
    const masker = new Masker();
    const held: string[] = [];
    const text = maskedPlanText(tf, { privateDir }, masker, { hold: () => {}, saw: (line) => void held.push(line) });

    const planned = await text.around(async () => {
      const result = await text.plan({ out: join(dir, 'plan.bin'), vars: { secret: SECRET } });
      assert.deepEqual(printed, [], 'nothing of the plan is printed before the masker has learned its secrets');
      masker.add(SECRET, 'var.secret');
      return result;
    });

    assert.equal(planned.hasChanges, true);
    assert.deepEqual(printed, held, 'every line terraform printed, in its order');
    assert.equal(printed.filter((line) => line.includes('+ input')).length, INSTANCES);
    assert.ok(printed.join('\n').length > 64 * 1024, 'more than one piece of the kept-back file');
    // The run's own sink masks what it prints (output/log.ts); the plan's text in the result is masked here.
    const kept = text.text().split('\n');
    const inputs = kept.filter((line) => line.includes('+ input'));
    assert.ok(inputs.length > 0 && inputs.every((line) => line.includes(MASK) && !line.includes(SECRET)));
    assert.ok(!text.text().includes(SECRET));
    assert.deepEqual(
      kept.slice(0, 10),
      printed.slice(0, 10).map((line) => line.replaceAll(SECRET, MASK)),
    );
    assert.ok(!existsSync(join(privateDir, 'plan.txt')), 'the kept-back file is removed');
  });
});
