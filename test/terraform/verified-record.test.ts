// The image build's record of its verified terraform: which files it recognises, from their size
// and the sha256 of their first and last 64 KiB (what runner/terraform-record.sh writes; the e2e test
// test/e2e/terraform-record.test.ts runs that script and the runner together).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readRecord, recordedVersionLine, type TerraformRecord } from '../../src/terraform/verified-record.ts';
import { sha256Hex } from '../../src/util/sha256.ts';

/** What runner/terraform-record.sh samples: the first and the last 64 KiB. */
const SAMPLE = 64 * 1024;

function recordOf(path: string, bytes: Buffer): TerraformRecord {
  const sample = Math.min(SAMPLE, bytes.length);
  return {
    path,
    size: bytes.length,
    sha256: sha256Hex(bytes),
    head_sha256: sha256Hex(bytes.subarray(0, sample)),
    tail_sha256: sha256Hex(bytes.subarray(bytes.length - sample)),
    sample_bytes: SAMPLE,
    version_line: 'Terraform v1.11.4',
  };
}

function withBinary(bytes: Buffer, check: (path: string, record: TerraformRecord) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'captf-record-'));
  try {
    const path = join(dir, 'terraform');
    writeFileSync(path, bytes, { mode: 0o755 });
    check(path, recordOf(path, bytes));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function binary(size: number): Buffer {
  const bytes = Buffer.allocUnsafe(size);
  for (let i = 0; i < size; i++) bytes[i] = (i * 7919) % 251;
  return bytes;
}

describe('recordedVersionLine', () => {
  it('recognises the recorded file at the recorded path, small or larger than both samples', () => {
    for (const size of [0, 100, 3 * SAMPLE + 5])
      withBinary(binary(size), (path, record) =>
        assert.equal(recordedVersionLine(path, record), 'Terraform v1.11.4', `size ${size}`),
      );
  });

  it('another path, another size, a file writable by its group or others, a changed first or last 64 KiB: not the recorded file', () => {
    const bytes = binary(3 * SAMPLE);
    withBinary(bytes, (path, record) => {
      assert.equal(
        recordedVersionLine(`${path}-elsewhere`, { ...record, path: `${path}-elsewhere` }),
        undefined,
        'no file there',
      );
      assert.equal(
        recordedVersionLine(path, { ...record, path: '/usr/local/bin/terraform' }),
        undefined,
        'not the recorded path',
      );
      assert.equal(recordedVersionLine(path, { ...record, size: record.size + 1 }), undefined, 'another size');
      for (const mode of [0o775, 0o757]) {
        chmodSync(path, mode);
        assert.equal(recordedVersionLine(path, record), undefined, `mode ${mode.toString(8)}`);
      }
      chmodSync(path, 0o755);
      for (const at of [0, SAMPLE - 1, bytes.length - SAMPLE, bytes.length - 1]) {
        const changed = Buffer.from(bytes);
        changed[at] = changed[at]! ^ 1;
        writeFileSync(path, changed);
        assert.equal(recordedVersionLine(path, record), undefined, `byte ${at} changed`);
      }
    });
  });

  it('a byte changed between the two samples of the same size is not seen: the limit the image relies on its file ownership for', () => {
    const bytes = binary(3 * SAMPLE);
    withBinary(bytes, (path, record) => {
      const changed = Buffer.from(bytes);
      changed[SAMPLE + 10] = changed[SAMPLE + 10]! ^ 1;
      writeFileSync(path, changed);
      assert.equal(recordedVersionLine(path, record), 'Terraform v1.11.4');
    });
  });
});

describe('readRecord', () => {
  it('no record, a record that is not JSON or misses a field: none', () => {
    const dir = mkdtempSync(join(tmpdir(), 'captf-record-'));
    try {
      const file = join(dir, 'terraform-verified.json');
      assert.equal(readRecord(file), undefined);
      writeFileSync(file, '{"path":');
      assert.equal(readRecord(file), undefined);
      const record = recordOf('/usr/local/bin/terraform', binary(10));
      writeFileSync(file, JSON.stringify({ ...record, head_sha256: undefined }));
      assert.equal(readRecord(file), undefined);
      writeFileSync(file, JSON.stringify(record));
      assert.deepEqual(readRecord(file), record);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
