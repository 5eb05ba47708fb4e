// Which terraform the runner drives, and whether it supports it. One `version` launch: its first
// line names the flavour and the version ("Terraform v1.11.4", "OpenTofu v1.8.3"). `version -json`
// would not do alone: OpenTofu prints {"terraform_version": …} too. The binary's name is no guide:
// images often install tofu as `terraform`. In the image, the binary its build verified answers from
// the build's record instead (verified-record.ts).
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { imageError } from '../errors.ts';
import { lastLine } from './diagnostics.ts';
import type { StopHandle } from './stop.ts';
import { createTerraform } from './terraform.ts';
import { readRecord, recordedVersionLine } from './verified-record.ts';

export type Flavor = 'terraform' | 'opentofu';

export interface TerraformVersion {
  /** As the binary reports it, e.g. 1.11.4 or 1.9.0-beta1. */
  version: string;
  flavor: Flavor;
  /** The absolute path that ran. */
  path: string;
  /** Set when the image build's record answered (verified-record.ts): no `version` launch ran. */
  fromImageRecord?: true;
}

/** Supported ranges: the plan JSON format 1.x, and the flags the runner passes (-lockfile=readonly, import blocks …). */
const SUPPORTED: Readonly<Record<Flavor, { min: string; below: string }>> = {
  terraform: { min: '1.5.0', below: '2.0.0' },
  opentofu: { min: '1.6.0', below: '2.0.0' },
};

const FLAVOR_NAMES: Record<Flavor, string> = { terraform: 'Terraform', opentofu: 'OpenTofu' };

/**
 * The versions the runner is verified with: a real `show -json` of each is in the fixture corpus
 * (test/fixtures/plans/, checked by test/plan/corpus.test.ts). Any other supported version runs, with a warning.
 */
export const VERIFIED: readonly { flavor: Flavor; version: string }[] = [{ flavor: 'terraform', version: '1.11.4' }];

const verifiedText = () => VERIFIED.map((v) => `${FLAVOR_NAMES[v.flavor]} ${v.version}`).join(', ');

/** The warning for a supported version the runner is not verified with; undefined for a verified one. */
export function unverifiedWarning(v: Pick<TerraformVersion, 'version' | 'flavor'>): string | undefined {
  if (VERIFIED.some((known) => known.flavor === v.flavor && known.version === v.version)) return undefined;
  return `${FLAVOR_NAMES[v.flavor]} ${v.version} is not verified with this runner (verified: ${verifiedText()}): it runs, and anything its plans hold that the runner does not know makes the plan need an approval`;
}

const supportedText = () =>
  (Object.keys(SUPPORTED) as Flavor[])
    .map((f) => `${FLAVOR_NAMES[f]} >= ${SUPPORTED[f].min} < ${SUPPORTED[f].below}`)
    .join(' or ');

const HOW_TO_FIX = 'install terraform (or OpenTofu) on PATH, or pass --terraform PATH (CAPTF_TERRAFORM)';

/**
 * The absolute path of an executable: a path as given, or a bare name looked up on PATH.
 * Checked before running because a spawn failure reaches us only as an exit code without output.
 */
export function resolveExecutable(file: string, pathEnv: string | undefined, cwd = process.cwd()): string | undefined {
  const candidates = file.includes('/')
    ? [isAbsolute(file) ? file : resolve(cwd, file)]
    : (pathEnv ?? '')
        .split(delimiter)
        .filter(Boolean)
        .map((dir) => join(dir, file));
  return candidates.find((candidate) => {
    try {
      accessSync(candidate, constants.X_OK);
      return statSync(candidate).isFile();
    } catch {
      return false;
    }
  });
}

export const versionArgs = (): string[] => ['version'];

/**
 * What of `version`'s output is kept: its first line is all that counts, and terraform's own output (the version,
 * the platform, the providers, an "out of date" notice) is a few hundred bytes. A binary that prints more has the
 * rest drained, never held (its first line is still read).
 */
const VERSION_OUTPUT_BYTES = 64 * 1024;

export interface TerraformVersionOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** The run's stop handle: a hung `version` is interrupted like any terraform. */
  stop: StopHandle;
  /** The image build's record of the terraform it verified (verified-record.ts): its binary, still that file, is not asked. */
  record?: string;
}

export async function terraformVersion(
  terraformPath: string,
  options: TerraformVersionOptions,
): Promise<TerraformVersion> {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const path = resolveExecutable(terraformPath, env.PATH, cwd);
  if (!path) {
    throw imageError(
      `terraform not found: "${terraformPath}" is not an executable file${terraformPath.includes('/') ? '' : ' on PATH'}; ${HOW_TO_FIX}`,
      {
        terraformPath,
        setting: 'terraform',
      },
    );
  }
  const record = options.record === undefined ? undefined : readRecord(options.record);
  const recorded = record && recordedVersionLine(path, record);
  const fromRecord = recorded === undefined ? undefined : versionOfLine(path, recorded);
  if (fromRecord) return { ...fromRecord, fromImageRecord: true };
  const tf = createTerraform({ path, cwd, env, output: { lines() {} }, stop: options.stop });
  const run = await tf.run('version', versionArgs(), { captureStdout: true, captureStdoutBytes: VERSION_OUTPUT_BYTES });
  if (run.meaning !== 'ok') {
    const said = lastLine(run.stderrTail);
    throw imageError(
      `${path} version exited ${run.exitCode}${said ? `: ${said}` : ''}; is it a terraform binary for this platform? ${HOW_TO_FIX}`,
      {
        terraformPath: path,
        setting: 'terraform',
      },
    );
  }
  return parseVersionOutput(path, run.stdout);
}

/** Pure: the output of `version` → what ran. Only its first line counts (an "out of date" notice may follow). */
export function parseVersionOutput(path: string, text: string): TerraformVersion {
  const firstLine = text.trimStart().split('\n')[0]?.trim() ?? '';
  const found = versionOfLine(path, firstLine);
  if (!found) {
    throw imageError(
      `${path} is not a terraform binary the runner understands: the first line of \`version\` is "${firstLine.slice(0, 200)}", not "Terraform vX.Y.Z" or "OpenTofu vX.Y.Z"; ${HOW_TO_FIX}`,
      {
        terraformPath: path,
        setting: 'terraform',
      },
    );
  }
  return found;
}

/** "Terraform v1.11.4" or "OpenTofu v1.8.3" → what ran; undefined for any other line. */
function versionOfLine(path: string, line: string): TerraformVersion | undefined {
  const match = /^(Terraform|OpenTofu) v(\S+)$/.exec(line);
  if (!match || !parseSemver(match[2]!)) return undefined;
  return { version: match[2]!, flavor: match[1] === 'OpenTofu' ? 'opentofu' : 'terraform', path };
}

/** Throws ImageInvalid unless the version is in the supported range of its flavor. */
export function checkSupported(v: Pick<TerraformVersion, 'version' | 'flavor'>): void {
  const range = SUPPORTED[v.flavor];
  const found = parseSemver(v.version);
  const ok =
    found !== undefined &&
    compare(found, parseSemver(range.min)!) >= 0 &&
    compare(found, parseSemver(range.below)!) < 0;
  if (!ok) {
    throw imageError(
      `${FLAVOR_NAMES[v.flavor]} ${v.version} is not supported: the runner supports ${supportedText()}. Put a supported version in the image (Dockerfile ARG TERRAFORM_VERSION) or pass --terraform PATH.`,
      { flavor: v.flavor, version: v.version },
    );
  }
}

type Semver = [number, number, number, string];

/** 1.11.4 or 1.9.0-beta1; a pre-release sorts before its release, as semver says. */
function parseSemver(text: string): Semver | undefined {
  const match = /^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?$/.exec(text.trim());
  if (!match) return undefined;
  return [Number(match[1]), Number(match[2]), Number(match[3]), match[4] ?? ''];
}

function compare(a: Semver, b: Semver): number {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return (a[i] as number) - (b[i] as number);
  if (a[3] === b[3]) return 0;
  if (a[3] === '') return 1;
  if (b[3] === '') return -1;
  return a[3] < b[3] ? -1 : 1;
}
