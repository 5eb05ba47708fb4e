import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunnerError } from '../../src/errors.ts';
import { loadPolicy } from '../../src/policy/index.ts';
import { MAX_POLICY_FILE_BYTES, MAX_POLICY_FILES, readPolicyDir } from '../../src/policy/load.ts';
import type { PolicyProblem } from '../../src/policy/problems.ts';
import { ISSUE_EXAMPLE, POLICY_HEADER } from './policies.support.ts';

const roots: string[] = [];
after(async () => {
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

/** A fresh dir with the given files (a string is written as a file). */
async function dirWith(files: Record<string, string | Buffer> = {}): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'captf-policy-'));
  roots.push(root);
  const dir = join(root, 'policy');
  await mkdir(dir);
  for (const [name, content] of Object.entries(files)) await writeFile(join(dir, name), content);
  return dir;
}

/** The ImageInvalid error the promise rejects with, and its problems. */
async function refused(promise: Promise<unknown>): Promise<{ error: RunnerError; problems: PolicyProblem[] }> {
  const error = await promise.then(
    () => assert.fail('expected the policy dir to be refused'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof RunnerError, String(error));
  assert.equal(error.kind, 'image');
  assert.equal(error.reason, 'ImageInvalid');
  return { error, problems: (error.detail?.problems ?? []) as PolicyProblem[] };
}

const LIMIT_ONLY = `${POLICY_HEADER}limits: {maxDeletes: 3}\n`;

describe('policy dir loading', () => {
  it('reads *.yaml, *.yml and *.json files in the order their names sort', async () => {
    const dir = await dirWith({
      'b.yml': LIMIT_ONLY,
      'a.json': JSON.stringify({ apiVersion: 'policy.captf.io/v1', limits: { maxDeletes: 1 } }),
      'C.yaml': ISSUE_EXAMPLE,
    });
    const sources = await readPolicyDir(dir);
    assert.deepEqual(
      sources.map((s) => s.file),
      ['C.yaml', 'a.json', 'b.yml'].map((name) => join(dir, name)),
    );
    assert.equal(sources[0]!.text, ISSUE_EXAMPLE);
  });

  it('loadPolicy compiles the dir: rules in file order, the smallest maxDeletes and its file', async () => {
    const dir = await dirWith({
      '10-example.yaml': ISSUE_EXAMPLE,
      '20-limit.yaml': LIMIT_ONLY,
      '30-loose.yaml': `${POLICY_HEADER}limits: {maxDeletes: 50}\n`,
    });
    const policy = await loadPolicy(dir);
    assert.deepEqual(
      policy.rules.map((r) => [r.name, r.on, r.effect]),
      [
        ['protect-databases', 'change', 'deny'],
        ['iam-needs-review', 'change', 'requireApproval'],
      ],
    );
    assert.deepEqual(policy.maxDeletes, { limit: 3, file: join(dir, '20-limit.yaml') });
  });

  it('follows a symbolic link given as the dir itself (a path the caller chose)', async () => {
    const dir = await dirWith({ 'a.yaml': LIMIT_ONLY });
    const link = join(dir, '..', 'link');
    await symlink(dir, link);
    assert.equal((await readPolicyDir(link)).length, 1);
  });

  it('refuses a symbolic link inside the dir, and never shows what it points at', async () => {
    const dir = await dirWith({ 'a.yaml': LIMIT_ONLY });
    const secret = join(dir, '..', 'token');
    await writeFile(secret, 'eyJhbGciOiJSUzI1NiJ9.secret-service-account-token');
    await symlink(secret, join(dir, 'token.yaml'));
    const { error, problems } = await refused(readPolicyDir(dir));
    assert.deepEqual(problems, [
      {
        file: join(dir, 'token.yaml'),
        message: 'a symbolic link: policy files must be regular files in the policy dir itself',
      },
    ]);
    assert.doesNotMatch(
      JSON.stringify({ message: error.message, detail: error.detail }),
      /secret-service-account-token|eyJ/,
    );
  });

  it('refuses subdirectories, other files, hidden files and FIFOs, all named at once, without hanging on the FIFO', async () => {
    const dir = await dirWith({
      'a.yaml': LIMIT_ONLY,
      'README.md': '# policies\n',
      '.hidden.yaml': LIMIT_ONLY,
      yaml: LIMIT_ONLY,
    });
    await mkdir(join(dir, 'nested'));
    await mkdir(join(dir, 'more.yaml'));
    execFileSync('mkfifo', [join(dir, 'pipe.yaml')]);
    const { error, problems } = await refused(readPolicyDir(dir));
    assert.deepEqual(
      problems.map((p) => [p.file.slice(dir.length + 1), p.message.split(':')[0]]),
      [
        ['.hidden.yaml', 'not a policy file'],
        ['README.md', 'not a policy file'],
        ['more.yaml', 'a directory'],
        ['nested', 'not a policy file'],
        ['pipe.yaml', 'not a regular file (a device, FIFO or socket)'],
        ['yaml', 'not a policy file'],
      ],
    );
    assert.match(
      error.message,
      /^the policy dir .* is invalid: .*README\.md: not a policy file.*Nothing was planned or applied; fix the named files/,
    );
  });

  it('refuses a missing dir, a file given as the dir and a dir without policy files', async () => {
    const dir = await dirWith({ 'a.yaml': LIMIT_ONLY });
    const missing = (await refused(readPolicyDir(join(dir, 'missing')))).error;
    assert.match(
      missing.message,
      /^the policy dir \S+\/missing does not exist\. Nothing was planned or applied; check --policy \(CAPTF_POLICY\)/,
    );
    assert.doesNotMatch(missing.message, /remove the dir/, 'there is no dir to remove');
    assert.equal(missing.detail?.setting, 'policy');
    assert.match(
      (await refused(readPolicyDir(join(dir, 'a.yaml')))).error.message,
      /the policy dir \S+ is not a directory/,
    );
    assert.match((await refused(readPolicyDir(await dirWith()))).error.message, /holds no policy file: add \*\.yaml/);
  });

  it('refuses a file that is too large or not UTF-8, and a dir with too many entries', async () => {
    const big = await dirWith({
      'big.yaml': `${LIMIT_ONLY}#${'x'.repeat(MAX_POLICY_FILE_BYTES)}\n`,
      'latin1.yaml': Buffer.from([0x23, 0xe9, 0x0a]),
    });
    const { problems } = await refused(readPolicyDir(big));
    assert.deepEqual(
      problems.map((p) => p.message),
      [
        `${MAX_POLICY_FILE_BYTES + LIMIT_ONLY.length + 2} bytes; a policy file is at most ${MAX_POLICY_FILE_BYTES} bytes`,
        'not UTF-8 text',
      ],
    );
    const many = await dirWith(
      Object.fromEntries(Array.from({ length: MAX_POLICY_FILES + 1 }, (_, i) => [`p${i}.yaml`, LIMIT_ONLY])),
    );
    assert.match(
      (await refused(readPolicyDir(many))).error.message,
      /101 entries; a policy dir holds at most 100 files/,
    );
  });

  it('loadPolicy names every broken file and rule in one ImageInvalid error', async () => {
    const dir = await dirWith({
      'a.yaml': `${POLICY_HEADER}rules:\n- name: typo\n  match: change.knd == "delete"\n  effect: deny\n`,
      'b.yaml': `${POLICY_HEADER}rules:\n- name: typo\n  match: "true"\n  effect: deny\n`,
      'c.yaml': 'apiVersion: policy.captf.io/v1\nlimits: {maxDeletes: -2}\n',
    });
    const { error, problems } = await refused(loadPolicy(dir));
    assert.deepEqual(
      problems.map((p) => [p.file.slice(dir.length + 1), p.rule]),
      [
        ['a.yaml', 'typo'],
        ['b.yaml', 'typo'],
        ['c.yaml', undefined],
      ],
    );
    assert.match(error.message, /a\.yaml rule "typo": match: change has no field "knd"/);
    assert.match(error.message, /b\.yaml rule "typo": the name is already used in .*a\.yaml/);
    assert.match(error.message, /c\.yaml: limits\.maxDeletes: Too small/);
  });
});
