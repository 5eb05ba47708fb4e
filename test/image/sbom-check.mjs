// scripts/image/image-check.sh: the image's SBOM against what it describes. Exits 1 naming each difference.
//   node sbom-check.mjs SBOM ROOTFS LOCKFILE FACTS_JSON
// ROOTFS: the image's files (mounted); FACTS_JSON: what the image reports when run:
// {"node": "v24.x", "terraform": "1.11.4", "tini": "tini version 0.19.0", "busybox": "BusyBox v1.35.0 (…)"}.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const [sbomPath, rootfs, lockPath, factsJson] = process.argv.slice(2);
const sbom = JSON.parse(readFileSync(sbomPath, 'utf8'));
const lock = JSON.parse(readFileSync(lockPath, 'utf8'));
const facts = JSON.parse(factsJson);
const problems = [];
/** `want`: what `source` holds; `got`: what the SBOM names. */
const differ = (source, want, got) => {
  const missing = [...want].filter((x) => !got.has(x));
  const extra = [...got].filter((x) => !want.has(x));
  if (missing.length) problems.push(`in ${source}, not in the SBOM: ${missing.join(', ')}`);
  if (extra.length) problems.push(`in the SBOM, not in ${source}: ${extra.join(', ')}`);
};
const components = sbom.components ?? [];
const named = (name) => components.filter((c) => c.name === name);

if (sbom.bomFormat !== 'CycloneDX' || !/^urn:uuid:[0-9a-f-]{36}$/.test(sbom.serialNumber ?? ''))
  problems.push('not a CycloneDX document with a serial number');

// The runner's npm packages: the lockfile's, dev dependencies left out (the bundle holds no other).
const lockPackages = new Set(
  Object.entries(lock.packages)
    .filter(([path, entry]) => path !== '' && !entry.dev && !entry.link)
    .map(
      ([path, entry]) =>
        `${entry.name ?? path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)}@${entry.version}`,
    ),
);
const npmComponents = new Set(
  components
    .filter((c) => c.purl?.startsWith('pkg:npm/') && c.name !== 'captf-runner')
    .map((c) => `${c.name}@${c.version}`),
);
differ('package-lock.json (without dev packages)', lockPackages, npmComponents);
const runner = named('captf-runner')[0];
if (runner?.version !== lock.version)
  problems.push(`captf-runner: the SBOM says ${runner?.version}, package-lock.json ${lock.version}`);

// The programs, at the versions the image reports.
const version = (name) =>
  named(name)
    .map((c) => c.version)
    .join(', ') || 'none';
if (version('node') !== facts.node.replace(/^v/, ''))
  problems.push(`node: the SBOM says ${version('node')}, the image runs ${facts.node}`);
if (version('terraform') !== facts.terraform)
  problems.push(`terraform: the SBOM says ${version('terraform')}, the image's reports ${facts.terraform}`);
const terraformHash = named('terraform')[0]?.hashes?.find((h) => h.alg === 'SHA-256')?.content;
if (terraformHash !== facts.terraformSha256)
  problems.push(`terraform: the SBOM's SHA-256 ${terraformHash} is not the image's binary's ${facts.terraformSha256}`);
// Debian versions: tini 0.19.0-1+b3 runs as "tini version 0.19.0", busybox 1:1.35.0-4… as "BusyBox v1.35.0 (Debian 1:1.35.0-4…)".
const upstream = (debVersion) => debVersion?.replace(/^\d+:/, '').replace(/-[^-]*$/, '');
if (!facts.tini.includes(`version ${upstream(version('tini'))}`))
  problems.push(`tini: the SBOM says ${version('tini')}, the image's reports "${facts.tini}"`);
if (!facts.busybox.includes(`(Debian ${version('busybox-static')})`))
  problems.push(`busybox-static: the SBOM says ${version('busybox-static')}, the image's reports "${facts.busybox}"`);

// The Debian packages: exactly those the image records where scanners read them.
const statusDir = join(rootfs, 'var/lib/dpkg/status.d');
const recorded = new Set(
  readdirSync(statusDir)
    .filter((name) => !name.endsWith('.md5sums'))
    .map((name) => {
      const text = readFileSync(join(statusDir, name), 'utf8');
      return `${/^Package: (.*)$/m.exec(text)[1]}@${/^Version: (.*)$/m.exec(text)[1]}`;
    }),
);
differ(
  '/var/lib/dpkg/status.d',
  recorded,
  new Set(components.filter((c) => c.purl?.startsWith('pkg:deb/')).map((c) => `${c.name}@${c.version}`)),
);
const debianVersion = readFileSync(join(rootfs, 'etc/debian_version'), 'utf8').trim();
if (version('debian') !== debianVersion)
  problems.push(`debian: the SBOM says ${version('debian')}, /etc/debian_version ${debianVersion}`);

if (problems.length) {
  for (const problem of problems) console.error(problem);
  process.exit(1);
}
console.log(
  `${lockPackages.size} npm packages, node ${facts.node}, terraform ${facts.terraform}, ${recorded.size} Debian packages`,
);
