// Which terraform the runner drives, and whether it supports it. Terraform and OpenTofu both
// print {"terraform_version": …} for `version -json`; only the human `version` line tells them
// apart ("Terraform v1.11.4" / "OpenTofu v1.8.3"). The binary's name is no guide: images often
// install tofu as `terraform`.
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { imageError } from '../errors.ts';
import { lastLine } from './diagnostics.ts';
import type { StopHandle } from './stop.ts';
import { createTerraform } from './terraform.ts';

export type Flavor = 'terraform' | 'opentofu';

export interface TerraformVersion {
  /** As the binary reports it, e.g. 1.11.4 or 1.9.0-beta1. */
  version: string;
  flavor: Flavor;
  /** The absolute path that ran. */
  path: string;
  raw: { json: unknown; text: string };
}

/** Supported ranges: the plan JSON format 1.x, and the flags the runner passes (-lockfile=readonly, import blocks …). */
export const SUPPORTED: Readonly<Record<Flavor, { min: string; below: string }>> = {
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

export const supportedText = () =>
  (Object.keys(SUPPORTED) as Flavor[]).map((f) => `${FLAVOR_NAMES[f]} >= ${SUPPORTED[f].min} < ${SUPPORTED[f].below}`).join(' or ');

const HOW_TO_FIX = 'install terraform (or OpenTofu) on PATH, or pass --terraform PATH (CAPTF_TERRAFORM)';

/**
 * The absolute path of an executable: a path as given, or a bare name looked up on PATH.
 * Checked before running because a spawn failure reaches us only as an exit code without output.
 */
export function resolveExecutable(file: string, pathEnv: string | undefined, cwd = process.cwd()): string | undefined {
  const candidates = file.includes('/')
    ? [isAbsolute(file) ? file : resolve(cwd, file)]
    : (pathEnv ?? '').split(delimiter).filter(Boolean).map((dir) => join(dir, file));
  return candidates.find((candidate) => {
    try {
      accessSync(candidate, constants.X_OK);
      return statSync(candidate).isFile();
    } catch {
      return false;
    }
  });
}

export const versionArgs = (o: { json?: boolean } = {}): string[] => ['version', ...(o.json ? ['-json'] : [])];

export interface TerraformVersionOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** The run's stop handle: a hung `version` is interrupted like any terraform. */
  stop: StopHandle;
}

export async function terraformVersion(terraformPath: string, options: TerraformVersionOptions): Promise<TerraformVersion> {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const path = resolveExecutable(terraformPath, env.PATH, cwd);
  if (!path) {
    throw imageError(`terraform not found: "${terraformPath}" is not an executable file${terraformPath.includes('/') ? '' : ' on PATH'}; ${HOW_TO_FIX}`, {
      terraformPath,
    });
  }
  const tf = createTerraform({ path, cwd, env, output: { line() {} }, stop: options.stop });
  const [jsonRun, textRun] = await Promise.all([
    tf.run('version', versionArgs({ json: true }), { captureStdout: true }),
    tf.run('version', versionArgs(), { captureStdout: true }),
  ]);
  const failed = [jsonRun, textRun].find((r) => r.meaning !== 'ok');
  if (failed) {
    const said = lastLine(failed.stderrTail);
    throw imageError(`${path} version exited ${failed.exitCode}${said ? `: ${said}` : ''}; is it a terraform binary for this platform? ${HOW_TO_FIX}`, {
      terraformPath: path,
    });
  }
  return parseVersionOutput(path, jsonRun.stdout, textRun.stdout);
}

/** Pure: the two outputs of `version -json` and `version` → what ran. */
export function parseVersionOutput(path: string, jsonText: string, text: string): TerraformVersion {
  let json: unknown;
  try {
    json = JSON.parse(jsonText);
  } catch {
    json = undefined;
  }
  const version = (json as { terraform_version?: unknown } | undefined)?.terraform_version;
  const firstLine = text.trim().split('\n')[0] ?? '';
  if (typeof version !== 'string' || !parseSemver(version)) {
    throw imageError(`${path} is not a terraform binary the runner understands: \`version -json\` printed no terraform_version (first line of \`version\`: "${firstLine}"); ${HOW_TO_FIX}`, {
      terraformPath: path,
    });
  }
  const flavor: Flavor = /^OpenTofu\b/i.test(firstLine) ? 'opentofu' : 'terraform';
  return { version, flavor, path, raw: { json, text } };
}

/** Throws ImageInvalid unless the version is in the supported range of its flavor. */
export function checkSupported(v: Pick<TerraformVersion, 'version' | 'flavor'>): void {
  const range = SUPPORTED[v.flavor];
  const found = parseSemver(v.version);
  const ok = found !== undefined && compare(found, parseSemver(range.min)!) >= 0 && compare(found, parseSemver(range.below)!) < 0;
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
