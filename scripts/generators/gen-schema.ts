// Generates contract/result.schema.json (and the termination message, classification, manifest and policy schemas) from
// the zod schemas, the single source of truth. `--check` fails when the committed files are stale.
import { readFileSync, writeFileSync } from 'node:fs';
import { z } from 'zod';
import { Result, TerminationMessage } from '../../src/schemas/result.ts';
import { Classification } from '../../src/schemas/classification.ts';
import { ArtifactManifest } from '../../src/store/manifest.ts';
import { PolicyFile } from '../../src/policy/schema.ts';

/** What the runner writes is described as output; a policy file, which people write, as input (defaults optional). */
const schemas: Record<string, [z.ZodType, 'input' | 'output']> = {
  'contract/result.schema.json': [Result, 'output'],
  'contract/termination.schema.json': [TerminationMessage, 'output'],
  'contract/classification.schema.json': [Classification, 'output'],
  'contract/artifact-manifest.schema.json': [ArtifactManifest, 'output'],
  'contract/policy.schema.json': [PolicyFile, 'input'],
};

const check = process.argv.includes('--check');
let stale = 0;
for (const [file, [schema, io]] of Object.entries(schemas)) {
  const text = JSON.stringify(z.toJSONSchema(schema, { io, unrepresentable: 'any' }), null, 2) + '\n';
  const path = new URL(`../../${file}`, import.meta.url);
  if (check) {
    let current = '';
    try {
      current = readFileSync(path, 'utf8');
    } catch {
      // missing counts as stale
    }
    if (current !== text) {
      console.error(`${file} is stale: run npm run schema`);
      stale++;
    }
  } else writeFileSync(path, text);
}
process.exit(stale ? 1 : 0);
