// The bundle's npm packages as CycloneDX: `npm sbom --package-lock-only` (on stdin) cut down to the
// packages package-lock.json does not mark dev. Not `npm sbom --omit dev`: it also drops a package a
// dev dependency needs besides a runtime one (pg-types, needed by pg and by @types/pg; tslib), so the
// image's SBOM would miss code the bundle holds. scripts/image/stage-image-context.sh runs it:
//   npm sbom --package-lock-only --sbom-format cyclonedx | node scripts/image/npm-sbom.mjs > dist/npm-sbom.cdx.json
import { readFileSync } from 'node:fs';

const lock = JSON.parse(readFileSync('package-lock.json', 'utf8'));
const runtime = new Set(
  Object.entries(lock.packages)
    .filter(([path, entry]) => path !== '' && !entry.dev && !entry.link)
    .map(
      ([path, entry]) =>
        `${entry.name ?? path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)}@${entry.version}`,
    ),
);
const sbom = JSON.parse(readFileSync(0, 'utf8'));
const isNpm = (component) => component.purl?.startsWith('pkg:npm/') && component.name !== lock.name;
const components = sbom.components.filter(
  (component) => !isNpm(component) || runtime.has(`${component.name}@${component.version}`),
);
const kept = new Set([sbom.metadata?.component?.['bom-ref'], ...components.map((component) => component['bom-ref'])]);
const dependencies = (sbom.dependencies ?? [])
  .filter((dependency) => kept.has(dependency.ref))
  .map((dependency) => ({ ...dependency, dependsOn: (dependency.dependsOn ?? []).filter((ref) => kept.has(ref)) }));
const missing = [...runtime].filter(
  (name) => !components.some((component) => `${component.name}@${component.version}` === name),
);
if (missing.length) {
  console.error(`npm-sbom: package-lock.json's runtime packages missing from npm sbom's output: ${missing.join(', ')}`);
  process.exit(1);
}
process.stdout.write(JSON.stringify({ ...sbom, components, dependencies }, null, 2) + '\n');
