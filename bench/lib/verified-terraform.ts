// The record of a verified terraform beside the bench's runner (`npm run bench -- --verified-terraform`), made
// with the image build's checks (Dockerfile, stage `terraform`), so that the bench's applies start no `version`
// launch, as the image's do: the binary's sha256 is the one committed for its version and platform in
// runner/terraform.sha256sums, the version it reports is that version, and runner/terraform-record.sh writes the
// record. The image's binary is root's and writable by no one else; the runner takes a record only for such a
// file (src/terraform/verified-record.ts), so one writable by others is refused here too.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const SUMS = 'runner/terraform.sha256sums';
const RECORD_SCRIPT = 'runner/terraform-record.sh';
/** Where the runner looks for the record: beside its entry (src/terraform/verified-record.ts). */
export const RECORD_FILE = 'terraform-verified.json';

/** The sha256 committed for `key` (`terraform_1.11.4_linux_amd64`) in the sums file's text, as the Dockerfile's awk reads it. */
export function pinnedSha256(sums: string, key: string): string | undefined {
  for (const line of sums.split('\n')) {
    const [sha256, name] = line.trim().split(/\s+/);
    if (sha256 && !sha256.startsWith('#') && name === key) return sha256;
  }
  return undefined;
}

/**
 * Checks `terraform` (an absolute path) as the image build checks the binary it installs, then writes its
 * record into `dir` (the dir of the runner's entry). Throws, saying what is wrong, when a check fails.
 */
export function writeVerifiedRecord(repo: string, terraform: string, dir: string, env: NodeJS.ProcessEnv): string {
  const version = spawnSync(terraform, ['version', '-json'], { encoding: 'utf8', env });
  if (version.status !== 0) throw new Error(`${terraform} version -json exited ${version.status ?? version.signal}`);
  const { terraform_version, platform } = JSON.parse(version.stdout) as { terraform_version: string; platform: string };
  const key = `terraform_${terraform_version}_${platform}`;
  const want = pinnedSha256(readFileSync(join(repo, SUMS), 'utf8'), key);
  if (!want)
    throw new Error(
      `no sha256 committed for ${key} in ${SUMS}: run scripts/image/pin-terraform.sh ${terraform_version}`,
    );
  const got = createHash('sha256').update(readFileSync(terraform)).digest('hex');
  if (got !== want)
    throw new Error(
      `terraform binary REFUSED: ${terraform}'s sha256 ${got} is not ${want}, the one committed for ${key} (${SUMS})`,
    );
  if ((statSync(terraform).mode & 0o022) !== 0)
    throw new Error(
      `${terraform} is writable by its group or others: the runner takes no record for such a file (chmod go-w)`,
    );
  const made = spawnSync('sh', [join(repo, RECORD_SCRIPT), terraform, terraform], { encoding: 'utf8', env });
  if (made.status !== 0) throw new Error(`${RECORD_SCRIPT} failed: ${made.stderr.trim()}`);
  const record = join(dir, RECORD_FILE);
  writeFileSync(record, made.stdout);
  return record;
}
