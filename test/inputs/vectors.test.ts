// Replays contract/vectors/inputs-hash.json, whose expected values come from an independent
// implementation (test/inputs/inputs_hash_vectors.py): first from the logical files, then from
// real directories in both layouts, through readInputs.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { RunnerError } from '../../src/errors.ts';
import {
  canonicalInputsDocument,
  computeHashes,
  inputsFromFiles,
  readInputs,
  type InputsSnapshot,
} from '../../src/inputs/index.ts';
import type { ObjectKind } from '../../src/object-kind.ts';
import { writeInputsDir, type Layout } from './layout.support.ts';
import { tempDir } from '../support/tf-modules.ts';

type FileContent = string | { base64: string };
interface Vector {
  name: string;
  kind: ObjectKind;
  image: string;
  files: Record<string, FileContent>;
  expected: { inputsHash: string; approvalHash: string; canonical: string };
}
interface InvalidVector {
  name: string;
  files: Record<string, FileContent>;
  expected: { reason: string };
}

const vectorsFile = new URL('../../contract/vectors/inputs-hash.json', import.meta.url);
const { vectors, invalid } = JSON.parse(readFileSync(vectorsFile, 'utf8')) as {
  vectors: Vector[];
  invalid: InvalidVector[];
};

function logicalFiles(files: Record<string, FileContent>): Map<string, Uint8Array> {
  return new Map(
    Object.entries(files).map(([name, content]) => [
      name,
      typeof content === 'string' ? Buffer.from(content, 'utf8') : Buffer.from(content.base64, 'base64'),
    ]),
  );
}

function actual(vector: Vector, snapshot: InputsSnapshot) {
  const inputs = { image: vector.image, variables: snapshot.variables, files: snapshot.files };
  return { ...computeHashes({ ...inputs, kind: vector.kind }), canonical: canonicalInputsDocument(inputs) };
}

test('the vectors cover every case the contract names', () => {
  assert.ok(vectors.length >= 20);
  assert.ok(invalid.length >= 15);
  assert.ok(
    vectors.some((v) => v.expected.approvalHash !== v.expected.inputsHash),
    'a pool whose approval hash differs',
  );
  const negativeZeros = invalid.filter((v) => v.name.includes('negative-zero'));
  assert.ok(
    negativeZeros.length >= 5 && negativeZeros.some((v) => 'sensitive.tfvars.json' in v.files),
    'negative zeros in both files',
  );
});

describe('vectors from their logical files', () => {
  for (const vector of vectors) {
    test(vector.name, () => {
      assert.deepEqual(actual(vector, inputsFromFiles(logicalFiles(vector.files))), vector.expected);
    });
  }
  for (const vector of invalid) {
    test(`refuses ${vector.name}`, () => {
      assert.throws(() => inputsFromFiles(logicalFiles(vector.files)), {
        name: 'RunnerError',
        kind: 'usage',
        reason: vector.expected.reason,
      });
    });
  }
});

for (const layout of ['plain', 'kubernetes-mount'] satisfies Layout[]) {
  describe(`vectors as a ${layout} directory`, async () => {
    const root = await tempDir();
    after(() => rm(root, { recursive: true, force: true }));

    for (const [index, vector] of vectors.entries()) {
      test(vector.name, async () => {
        const dir = join(root, `valid-${index}`);
        await writeInputsDir(dir, logicalFiles(vector.files), layout);
        assert.deepEqual(actual(vector, await readInputs(dir)), vector.expected);
      });
    }
    for (const [index, vector] of invalid.entries()) {
      test(`refuses ${vector.name}`, async () => {
        const dir = join(root, `invalid-${index}`);
        await writeInputsDir(dir, logicalFiles(vector.files), layout);
        const error = await readInputs(dir).then(
          () => assert.fail('accepted'),
          (error: unknown) => error,
        );
        assert.ok(error instanceof RunnerError);
        assert.equal(error.kind, 'usage');
        assert.equal(error.reason, vector.expected.reason);
        assert.ok(error.message.includes(dir), `the message names the dir: ${error.message}`);
      });
    }
  });
}
