// terraform's human output where the runner prints it: stdout lines prefixed, stderr lines log
// records of their own, each masked across the lines of its command's stream, then escaped.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, openSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { createLogger, TERRAFORM_LINE_PREFIX } from '../../src/output/log.ts';
import { MASK, Masker } from '../../src/masking/mask.ts';
import { terraformText } from '../../src/output/terraform-text.ts';

describe("output: terraform's text", () => {
  it('stdout: every line prefixed and escaped; stderr: a record per line naming its command and step; a secret across lines masked, per command', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'captf-tf-text-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const masker = new Masker();
    masker.add('two words', 'a value in sensitive.tfvars.json');
    const fd = openSync(join(dir, 'log'), 'w');
    const log = await createLogger('json', masker, { op: 'apply', object: null, namespace: null }, fd);
    const stdout = new PassThrough();
    let printed = '';
    stdout.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    const text = terraformText({ masker, log, step: () => 'validate', stdout });

    await text.lines('stdout', ['changed: nothing'], 'apply');
    await text.lines('stdout', ['\x1b[2Jcleared\r'], 'apply');
    await text.end!('stdout', 'apply');
    // validate's stderr ends with the start of the secret: it waits for its next line, and the pull's line beside it does not.
    await text.lines('stderr', ['Error: the value two'], 'validate');
    await text.lines('stderr', ['pulled'], 'state pull');
    await text.lines('stderr', ['words is refused'], 'validate');
    await text.end!('stderr', 'validate');
    await text.end!('stderr', 'state pull');
    closeSync(fd);

    assert.equal(printed, `${TERRAFORM_LINE_PREFIX}changed: nothing\n${TERRAFORM_LINE_PREFIX}\\x1b[2Jcleared\\r\n`);
    const records = (await readFile(join(dir, 'log'), 'utf8'))
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.deepEqual(
      records.map((r) => [r.source, r.command, r.stream, r.step, r.msg]),
      [
        ['terraform', 'state pull', 'stderr', 'validate', 'pulled'],
        ['terraform', 'validate', 'stderr', 'validate', `Error: the value ${MASK} is refused`],
      ],
    );
  });
});
