// `npm run bench -- --verified-terraform`: the record beside the bench's runner is made only for a terraform that
// passes the image build's checks (Dockerfile, stage `terraform`): its sha256 the one committed in
// runner/terraform.sha256sums for its version and platform, writable by no one but its owner. Against the real
// terraform on PATH (the machine's 1.11.4, the pinned binary) and copies of it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, test } from 'node:test';
import { cleanEnv } from '../../bench/lib/env.ts';
import { pinnedSha256, RECORD_FILE, writeVerifiedRecord } from '../../bench/lib/verified-terraform.ts';

const REPO = resolve(import.meta.dirname, '../..');
const TERRAFORM = spawnSync('bash', ['-c', 'command -v terraform'], { encoding: 'utf8' }).stdout.trim();
const dir = mkdtempSync(join(tmpdir(), 'captf-bench-record-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('the sums file read as the Dockerfile reads it: the line whose name is the key, comments skipped', () => {
  const sums =
    '# 1111  terraform_1.0.0_linux_amd64\n2222  terraform_1.0.0_linux_arm64\n3333  terraform_1.0.0_linux_amd64\n';
  assert.equal(pinnedSha256(sums, 'terraform_1.0.0_linux_amd64'), '3333');
  assert.equal(pinnedSha256(sums, 'terraform_1.0.1_linux_amd64'), undefined);
});

test('the pinned terraform: its record beside the runner, of that path, with the version it reports', () => {
  const lib = join(dir, 'lib');
  mkdirSync(lib);
  const record = writeVerifiedRecord(REPO, TERRAFORM, lib, cleanEnv());
  assert.equal(record, join(lib, RECORD_FILE));
  const made = JSON.parse(readFileSync(record, 'utf8'));
  assert.equal(made.path, TERRAFORM);
  assert.match(made.version_line, /^Terraform v1\.11\.4$/);
  assert.equal(made.sha256, createHash('sha256').update(readFileSync(TERRAFORM)).digest('hex'));
});

test('refused, no record written: a copy with 16 bytes appended, a copy writable by its group', () => {
  const tampered = join(dir, 'tampered');
  copyFileSync(TERRAFORM, tampered);
  chmodSync(tampered, 0o755);
  appendFileSync(tampered, '0123456789abcdef');
  const lib = join(dir, 'refused');
  mkdirSync(lib);
  assert.throws(
    () => writeVerifiedRecord(REPO, tampered, lib, cleanEnv()),
    /terraform binary REFUSED: .*tampered's sha256 [0-9a-f]{64} is not [0-9a-f]{64}, the one committed for terraform_1\.11\.4_linux_/,
  );
  const writable = join(dir, 'writable');
  copyFileSync(TERRAFORM, writable);
  chmodSync(writable, 0o775);
  assert.throws(() => writeVerifiedRecord(REPO, writable, lib, cleanEnv()), /writable by its group or others/);
  assert.throws(() => readFileSync(join(lib, RECORD_FILE)), { code: 'ENOENT' });
});
