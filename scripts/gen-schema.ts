// Generates contract/result.schema.json (and the classification and manifest schemas) from the zod
// schemas, the single source of truth. `--check` fails when the committed files are stale.
import { readFileSync, writeFileSync } from 'node:fs';
import { z } from 'zod';
import { Result } from '../src/contract/result.ts';
import { Classification } from '../src/contract/classification.ts';
import { ArtifactManifest } from '../src/store/manifest.ts';

const schemas: Record<string, z.ZodType> = {
  'contract/result.schema.json': Result,
  'contract/classification.schema.json': Classification,
  'contract/artifact-manifest.schema.json': ArtifactManifest,
};

const check = process.argv.includes('--check');
let stale = 0;
for (const [file, schema] of Object.entries(schemas)) {
  const text = JSON.stringify(z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' }), null, 2) + '\n';
  const path = new URL(`../${file}`, import.meta.url);
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
