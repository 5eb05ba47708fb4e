// terraform's human plan kept back while the plan runs and printed masked after it: with the real
// terraform, a plan whose text is larger than the pieces the kept lines are written to the file in.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, existsSync, openSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { createLogger } from '../../src/output/log.ts';
import { terraformText } from '../../src/output/terraform-text.ts';
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

/** The test suite's terraform in `dir`, its output to `output`. */
function testTerraform(dir: string, output: TerraformOutput) {
  const env = testTerraformEnv();
  return createTerraform({
    path: resolveExecutable(TERRAFORM, env.PATH)!,
    cwd: dir,
    env,
    output,
    stop: new StopHandle(),
  });
}

describe('steps: the kept-back plan text', () => {
  it('prints nothing of the plan while it runs, then every line in order, its text masked by what was learned after the plan, once: the text kept is the text printed', async (t) => {
    const dir = await writeModule(moduleTree, t);
    assert.equal((await runTestTerraform(dir, ['init', '-input=false', '-no-color'])).exitCode, 0);
    const privateDir = join(dir, '.private');
    await mkdir(privateDir, { mode: 0o700 });
    const masker = new Masker();
    // Every text the masker masks, counted: the plan's text is masked once, where it is printed.
    let maskedChars = 0;
    const mask = masker.mask.bind(masker);
    masker.mask = (text: string) => {
      maskedChars += text.length;
      return mask(text);
    };
    const logDir = await mkdtemp(join(tmpdir(), 'captf-plan-text-'));
    t.after(() => rm(logDir, { recursive: true, force: true }));
    const fd = openSync(join(logDir, 'log'), 'w');
    t.after(() => closeSync(fd));
    const log = await createLogger('json', masker, { op: 'plan', object: null, namespace: null }, fd);
    const stdout = new PassThrough();
    let shown = '';
    stdout.on('data', (chunk: Buffer) => (shown += chunk.toString()));
    // As the run prints terraform's text (steps/prepare.ts), every line it was given recorded.
    const printing = terraformText({ masker, log, step: () => 'plan', stdout });
    const printed: string[] = [];
    const output: TerraformOutput = {
      lines: (stream, texts, command, keep) => {
        if (stream === 'stdout') printed.push(...texts);
        return printing.lines(stream, texts, command, keep);
      },
      end: printing.end,
    };
    const tf = testTerraform(dir, output);
    const held: string[] = [];
    const text = maskedPlanText(tf, { privateDir }, { hold: () => {}, saw: (line) => void held.push(line) });

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
    const shownLines = shown.trimEnd().split('\n');
    assert.equal(shownLines.length, printed.length);
    assert.ok(!shown.includes(SECRET) && shown.includes(MASK), 'printed masked');
    // The text kept for the result and the summary is the text printed, masked once.
    assert.ok(maskedChars < shown.length * 1.1, `masked once: ${maskedChars} characters for ${shown.length} printed`);
    const kept = text.text().split('\n');
    const inputs = kept.filter((line) => line.includes('+ input'));
    assert.ok(inputs.length > 0 && inputs.every((line) => line.includes(MASK) && !line.includes(SECRET)));
    assert.ok(!text.text().includes(SECRET));
    assert.deepEqual(
      kept.slice(0, 10),
      printed.slice(0, 10).map((line) => line.replaceAll(SECRET, MASK)),
    );
    assert.ok(text.text().length <= 64 * 1024 && text.text().length > 60 * 1024, 'the first 64 KiB kept');
    assert.ok(!existsSync(join(privateDir, 'plan.txt')), 'the kept-back file is removed');
  });

  it('withheld (a failed plan whose state before could not be read): nothing printed, stdout nor stderr, and the warning says why, once', async (t) => {
    const dir = await writeModule(
      {
        'main.tf': `variable "secret" {
  type = string
}
resource "terraform_data" "r" {
  input = var.secret
}
`,
      },
      t,
    );
    assert.equal((await runTestTerraform(dir, ['init', '-input=false', '-no-color'])).exitCode, 0);
    const privateDir = join(dir, '.private');
    await mkdir(privateDir, { mode: 0o700 });
    const printed: string[] = [];
    const output: TerraformOutput = { lines: (_stream, texts) => void printed.push(...texts) };
    const tf = testTerraform(dir, output);
    const warnings: string[] = [];
    const held: string[] = [];
    const text = maskedPlanText(
      tf,
      { privateDir },
      { hold: () => {}, saw: (line) => void held.push(line) },
      { withheld: () => 'the state could not be read', warn: (message) => warnings.push(message) },
    );
    // A plan that fails (an undeclared variable): its diagnostic on stderr is kept back too.
    await assert.rejects(
      text.around(() => text.plan({ out: join(dir, 'plan.bin'), vars: { secret: SECRET, undeclared: SECRET } })),
      /undeclared/,
    );
    assert.ok(
      held.some((line) => line.includes('Value for undeclared variable')),
      'terraform printed its diagnostic',
    );
    assert.deepEqual(printed, [], 'nothing of it reached the output');
    assert.deepEqual(warnings, ["terraform's output during the plan was not printed: the state could not be read"]);
    assert.equal(text.text(), '');
    for (const file of ['plan.txt', 'plan-stderr.txt']) assert.ok(!existsSync(join(privateDir, file)), file);
  });
});
