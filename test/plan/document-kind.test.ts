import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DOCUMENT_HEAD_BYTES, misfedDocument, peekHead } from '../../src/plan/document-kind.ts';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures');
const head = async (path: string) => (await readFile(path)).subarray(0, DOCUMENT_HEAD_BYTES);

describe('misfedDocument', () => {
  it("names each file terraform makes that is not a plan's JSON, with the command that makes one", async () => {
    const expected: Record<string, RegExp> = {
      'saved.tfplan': /^a binary plan file/,
      'plan-json.jsonl': /^terraform plan -json's output/,
      'terraform.tfstate': /^a terraform state/,
      'show-state.json': /^the JSON of a state/,
    };
    for (const [name, what] of Object.entries(expected)) {
      const misfed = misfedDocument(await head(join(FIXTURES, 'not-a-plan', name)));
      assert.match(misfed?.what ?? '', what, name);
      assert.match(misfed!.fix, /terraform show -json PLANFILE > plan\.json/, name);
    }
    assert.match(
      misfedDocument(Buffer.from('{"format_version":"1.0"}\n'))!.what,
      /^the JSON of a state/,
      'an empty state',
    );
    assert.match(
      misfedDocument(Buffer.from('{\n  "format_version": "1.0",\n  "terraform_version": "1.11.4",\n  "values": {}\n}'))!
        .what,
      /^the JSON of a state/,
      'pretty-printed',
    );
  });

  it('every plan document of the fixtures may be a plan', async () => {
    const root = join(FIXTURES, 'plans');
    let plans = 0;
    for (const dir of await readdir(root)) {
      for (const name of (await readdir(join(root, dir))).filter(
        (n) => n.endsWith('.json') && !n.endsWith('.expected.json'),
      )) {
        assert.equal(misfedDocument(await head(join(root, dir, name))), undefined, `${dir}/${name}`);
        plans++;
      }
    }
    assert.ok(plans > 20, `${plans} plans`);
  });
});

describe('peekHead', () => {
  it('gives the first bytes and the whole source again, across chunks and for a short source', async () => {
    async function* chunks() {
      yield 'ab';
      yield Buffer.from('cde');
      yield 'fgh';
    }
    const { head: first, source } = await peekHead(chunks(), 4);
    assert.equal(first.toString(), 'abcd');
    let whole = '';
    for await (const chunk of source) whole += Buffer.from(chunk).toString();
    assert.equal(whole, 'abcdefgh');
    const short = await peekHead(chunks(), 100);
    assert.equal(short.head.toString(), 'abcdefgh');
  });
});
