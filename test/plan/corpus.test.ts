// The repository's corpus of plan documents (test/fixtures/plans/<tool-version>/): every one is
// classified by the reference and by the streaming reader, with the runner's own options, and both
// must equal its golden file (<name>.expected.json). UPDATE_GOLDEN=1 rewrites the golden files:
// review their diff. Also: a version the runner calls verified has a real document here.
import assert from 'node:assert/strict';
import { createReadStream, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Classification } from '../../src/schemas/classification.ts';
import { runnerClassifyOptions } from '../../src/plan/runner-options.ts';
import { classifyPlan } from '../../src/plan/classify.ts';
import { classifyPlanStream } from '../../src/plan/stream.ts';
import { VERIFIED } from '../../src/terraform/version.ts';
import { chunked, everyNthByte } from './plans.support.ts';

const PLANS = fileURLToPath(new URL('../fixtures/plans/', import.meta.url));
/** Directories of real `show -json` output of the tool and version they are named after (their README says so). */
const REAL = { 'terraform-1.11': 'terraform' } as const;
/** Directories built from a newer tool's source (their README names the file and tag of each shape). */
const FROM_SOURCE = ['terraform-1.14+', 'opentofu-1.11+'];

interface Golden {
  /** The options beyond the runner's own (a destroy plan's). */
  options: { destroyPlan?: boolean };
  classification: Classification;
}

const fixtures = (dir: string) =>
  readdirSync(join(PLANS, dir))
    .filter((f) => f.endsWith('__plan.json'))
    .sort();
const goldenPath = (dir: string, file: string) => join(PLANS, dir, file.replace(/__plan\.json$/, '.expected.json'));

for (const dir of [...Object.keys(REAL), ...FROM_SOURCE]) {
  describe(`corpus ${dir}`, () => {
    test('has a README that names every fixture', () => {
      const readme = readFileSync(join(PLANS, dir, 'README.md'), 'utf8');
      for (const file of fixtures(dir))
        assert.ok(readme.includes(`\`${file}\``), `${dir}/README.md does not describe ${file}`);
    });

    for (const file of fixtures(dir)) {
      test(file, async () => {
        const path = join(PLANS, dir, file);
        const golden = goldenPath(dir, file);
        const known = existsSync(golden) ? (JSON.parse(readFileSync(golden, 'utf8')) as Golden) : undefined;
        // A new fixture's options: a destroy plan by its name.
        const options = known?.options ?? (/^destroy/.test(file) ? { destroyPlan: true } : {});
        const bytes = readFileSync(path);
        const reference = Classification.parse(
          classifyPlan(JSON.parse(bytes.toString('utf8')), runnerClassifyOptions(options)),
        );
        assert.deepEqual(
          await classifyPlanStream(createReadStream(path), runnerClassifyOptions(options)),
          reference,
          'the streaming reader agrees',
        );
        // In memory: a file read 7 bytes at a time costs a read call each.
        assert.deepEqual(
          await classifyPlanStream(chunked(bytes, everyNthByte(bytes, 7)), runnerClassifyOptions(options)),
          reference,
          'in 7-byte chunks too',
        );
        if (process.env.UPDATE_GOLDEN === '1')
          writeFileSync(golden, JSON.stringify({ options, classification: reference }, null, 2) + '\n');
        else {
          assert.ok(
            known,
            `${golden} is missing: run UPDATE_GOLDEN=1 node --import tsx --test test/plan/corpus.test.ts and review it`,
          );
          assert.deepEqual(reference, known.classification);
        }
      });
    }
  });
}

describe('verified versions', () => {
  test('a version is verified exactly when a real show -json of it is in the corpus', () => {
    const real = new Set<string>();
    for (const [dir, flavor] of Object.entries(REAL)) {
      for (const file of fixtures(dir))
        real.add(
          `${flavor} ${(JSON.parse(readFileSync(join(PLANS, dir, file), 'utf8')) as { terraform_version: string }).terraform_version}`,
        );
    }
    assert.deepEqual(new Set(VERIFIED.map((v) => `${v.flavor} ${v.version}`)), real);
  });
});
