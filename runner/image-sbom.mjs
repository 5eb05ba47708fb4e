// The image's SBOM (CycloneDX 1.5), made in the Dockerfile's `app` stage: the runner's npm packages
// (`npm sbom --package-lock-only` less the lock file's dev packages, staged by scripts/image/stage-image-context.sh), node,
// terraform, and every Debian package the image records in /var/lib/dpkg/status.d. Deterministic:
// no clock, no random serial (it is derived from the content), everything sorted, so that the same
// tree builds the same image ID.
//
//   node image-sbom.mjs --npm FILE --status DIR --debian-version FILE --terraform DIR
//                       --terraform-tool terraform|tofu --node-version vX.Y.Z --runner-version V --created RFC3339
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: Object.fromEntries(
    ['npm', 'status', 'debian-version', 'terraform', 'terraform-tool', 'node-version', 'runner-version', 'created'].map(
      (name) => [name, { type: 'string' }],
    ),
  ),
});
for (const [name, value] of Object.entries(args)) if (!value) throw new Error(`image-sbom: --${name} is required`);
if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(args.created))
  throw new Error(`image-sbom: --created must be RFC 3339 in UTC (the commit's time), not "${args.created}"`);

const npm = JSON.parse(readFileSync(args.npm, 'utf8'));
const runnerVersion = args['runner-version'];
const nodeVersion = args['node-version'].replace(/^v/, '');
const debianVersion = readFileSync(args['debian-version'], 'utf8').trim();
const debianMajor = debianVersion.split('.')[0];
const terraformVersion = JSON.parse(readFileSync(join(args.terraform, 'version.json'), 'utf8')).terraform_version;
const terraformSha256 = readFileSync(join(args.terraform, 'sha256'), 'utf8').trim();
const tool = args['terraform-tool'];

/** A Debian package's purl (the epoch is a qualifier; name and version percent-encoded: libstdc%2B%2B6). */
function debPurl(name, version, arch) {
  const [, epoch, rest] = /^(?:(\d+):)?(.*)$/.exec(version);
  const qualifiers = [`arch=${arch}`, `distro=debian-${debianMajor}`, ...(epoch ? [`epoch=${epoch}`] : [])];
  return `pkg:deb/debian/${encodeURIComponent(name)}@${encodeURIComponent(rest)}?${qualifiers.join('&')}`;
}

/** The fields of a dpkg status entry (the first line of each field; continuation lines are the long description). */
function statusFields(text) {
  return Object.fromEntries(
    text
      .split('\n')
      .filter((line) => /^[A-Za-z-]+: /.test(line))
      .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)]),
  );
}

const debs = readdirSync(args.status)
  .filter((name) => !name.endsWith('.md5sums'))
  .sort()
  .map((file) => statusFields(readFileSync(join(args.status, file), 'utf8')))
  .map((fields) => {
    const purl = debPurl(fields.Package, fields.Version, fields.Architecture);
    return {
      'bom-ref': purl,
      type: 'library',
      name: fields.Package,
      version: fields.Version,
      purl,
      ...(fields.Source ? { properties: [{ name: 'debian:source', value: fields.Source }] } : {}),
    };
  });

const runnerRef = `captf-runner@${runnerVersion}`;
const nodeRef = `node@${nodeVersion}`;
const terraformRef = `${tool}@${terraformVersion}`;
const osRef = `debian@${debianVersion}`;
const npmRoot = npm.metadata.component;

const components = [
  {
    'bom-ref': runnerRef,
    type: 'application',
    name: 'captf-runner',
    version: runnerVersion,
    description: npmRoot.description,
    purl: `pkg:npm/captf-runner@${runnerVersion}`,
    licenses: npmRoot.licenses,
  },
  ...npm.components,
  {
    'bom-ref': nodeRef,
    type: 'platform',
    name: 'node',
    version: nodeVersion,
    purl: `pkg:generic/node@${nodeVersion}`,
    cpe: `cpe:2.3:a:nodejs:node.js:${nodeVersion}:*:*:*:*:*:*:*`,
  },
  {
    'bom-ref': terraformRef,
    type: 'application',
    name: tool,
    version: terraformVersion,
    ...(tool === 'terraform'
      ? {
          purl: `pkg:golang/github.com/hashicorp/terraform@v${terraformVersion}`,
          cpe: `cpe:2.3:a:hashicorp:terraform:${terraformVersion}:*:*:*:*:*:*:*`,
        }
      : { purl: `pkg:golang/github.com/opentofu/opentofu@v${terraformVersion}` }),
    hashes: [{ alg: 'SHA-256', content: terraformSha256 }],
  },
  { 'bom-ref': osRef, type: 'operating-system', name: 'debian', version: debianVersion },
  ...debs,
].sort((a, b) => (a['bom-ref'] < b['bom-ref'] ? -1 : a['bom-ref'] > b['bom-ref'] ? 1 : 0));

// The npm graph names its root by the lockfile's root; the image depends on the runner, node, terraform and the OS.
const dependencies = [
  {
    ref: 'captf-runner-image',
    dependsOn: [runnerRef, nodeRef, terraformRef, osRef, ...debs.map((d) => d['bom-ref'])].sort(),
  },
  ...npm.dependencies.map((d) => (d.ref === npmRoot['bom-ref'] ? { ...d, ref: runnerRef } : d)),
].sort((a, b) => (a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0));

const bom = {
  $schema: 'http://cyclonedx.org/schema/bom-1.5.schema.json',
  bomFormat: 'CycloneDX',
  specVersion: '1.5',
  serialNumber: '',
  version: 1,
  metadata: {
    timestamp: args.created,
    lifecycles: [{ phase: 'build' }],
    tools: npm.metadata.tools,
    component: { 'bom-ref': 'captf-runner-image', type: 'container', name: 'captf-runner', version: runnerVersion },
  },
  components,
  dependencies,
};

// The serial number CycloneDX requires, as a UUID (version 5 layout) of the content itself.
const digest = createHash('sha256').update(JSON.stringify(bom)).digest('hex');
const uuid = [
  digest.slice(0, 8),
  digest.slice(8, 12),
  `5${digest.slice(13, 16)}`,
  ((parseInt(digest[16], 16) & 0x3) | 0x8).toString(16) + digest.slice(17, 20),
  digest.slice(20, 32),
].join('-');
bom.serialNumber = `urn:uuid:${uuid}`;
process.stdout.write(JSON.stringify(bom, null, 2) + '\n');
