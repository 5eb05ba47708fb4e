// scripts/image/pin-terraform.sh, the release step that pins a terraform binary (it needs the network, so
// CI never runs it for real): here against a release made locally, signed by a key made for the test
// and named by its fingerprint, as HashiCorp's is. A pin is written only for a zip that the signed
// SHA256SUMS lists, signed by that key.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { runChecked, runProcess } from '../support/exec.ts';
import { tempDir } from '../support/tf-modules.ts';

const SCRIPT = join(import.meta.dirname, '../../scripts/image/pin-terraform.sh');
const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

/** A key in its own GNUPGHOME; its armored public key and its fingerprint. */
async function signingKey(dir: string): Promise<{ env: Record<string, string>; fingerprint: string; armored: string }> {
  const env = { ...process.env, GNUPGHOME: dir } as Record<string, string>;
  await runChecked('chmod', ['0700', dir]);
  await runChecked(
    'gpg',
    [
      '--batch',
      '--quiet',
      '--passphrase',
      '',
      '--quick-gen-key',
      'Release <release@example.com>',
      'ed25519',
      'sign',
      'never',
    ],
    { env },
  );
  const listing = (await runChecked('gpg', ['--batch', '--with-colons', '--list-keys'], { env })).stdout;
  const fingerprint = /^fpr:+([0-9A-F]{40}):/m.exec(listing)![1]!;
  const armored = (await runChecked('gpg', ['--batch', '--armor', '--export', fingerprint], { env })).stdout;
  return { env, fingerprint, armored };
}

describe('scripts/image/pin-terraform.sh', () => {
  test("pins the binary of a zip the signed SHA256SUMS lists; refuses a changed zip and another key's signature", {
    timeout: 60_000,
  }, async (t) => {
    const release = await tempDir(t, 'captf-release-');
    const key = await signingKey(await tempDir(t, 'captf-gnupg-'));
    const other = await signingKey(await tempDir(t, 'captf-gnupg-'));
    const binary = '#!/bin/sh\necho "Terraform v9.9.9"\n';
    await writeFile(join(release, 'terraform'), binary);
    await runChecked('zip', ['-q', '-j', join(release, 'terraform_9.9.9_linux_amd64.zip'), join(release, 'terraform')]);
    const zip = await readFile(join(release, 'terraform_9.9.9_linux_amd64.zip'));
    const sums = join(release, 'terraform_9.9.9_SHA256SUMS');
    await writeFile(sums, `${sha256(zip)}  terraform_9.9.9_linux_amd64.zip\n`);
    await runChecked('gpg', ['--batch', '--yes', '--detach-sign', '--output', `${sums}.sig`, sums], { env: key.env });
    await writeFile(join(release, 'release-key.asc'), key.armored);

    const pins = join(release, 'pins');
    const before = '# pins\nabc  terraform_1.0.0_linux_amd64\n';
    await writeFile(pins, before);
    const pin = (fingerprint: string) =>
      runProcess('bash', [SCRIPT, '9.9.9'], {
        env: { ...process.env, OFFLINE_DIR: release, PIN_FILE: pins, RELEASE_KEY_FINGERPRINT: fingerprint },
        timeoutMs: 30_000,
      });

    const good = await pin(key.fingerprint);
    assert.equal(good.exitCode, 0, good.stderr);
    const written = await readFile(pins, 'utf8');
    assert.ok(written.startsWith(before), 'other pins are kept');
    assert.match(
      written,
      new RegExp(
        `# terraform_9\\.9\\.9_linux_amd64: zip sha256 ${sha256(zip)} in the signed terraform_9\\.9\\.9_SHA256SUMS`,
      ),
    );
    assert.ok(written.endsWith(`${sha256(binary)}  terraform_9.9.9_linux_amd64\n`), written);
    assert.equal(await readFile(good.stdout.trim(), 'utf8'), binary, 'the verified binary, for TERRAFORM_BIN');

    await writeFile(pins, before);
    const otherKey = await pin(other.fingerprint);
    assert.equal(otherKey.exitCode, 1);
    assert.match(otherKey.stderr, /is not signed by the release key/);

    await writeFile(join(release, 'terraform_9.9.9_linux_amd64.zip'), Buffer.concat([zip, Buffer.from('tampered')]));
    const changed = await pin(key.fingerprint);
    assert.equal(changed.exitCode, 1);
    assert.match(
      changed.stderr,
      /terraform_9\.9\.9_linux_amd64\.zip has sha256 [0-9a-f]{64}, the signed terraform_9\.9\.9_SHA256SUMS says [0-9a-f]{64}: nothing pinned/,
    );
    assert.equal(await readFile(pins, 'utf8'), before, 'nothing pinned');
  });
});
