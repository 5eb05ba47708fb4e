// Masked whole, then cut (masking/boundary.ts), with the real terraform 1.11.4: a policy's deny message
// that quotes a secret `for_each` key across the places the sinks cut it (1,000 characters in the
// result, 300 in the termination message) shows no part of the secret in stdout, stderr, result.json,
// the termination message or the Markdown summary: the message is cut only once it is masked.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Result } from '../../src/schemas/result.ts';
import { explain, scenario } from '../support/runner.ts';

/** 40 characters; every 4 of them in a row hold a letter past `f`, so no hash or hex digest can hold one by chance. */
const SECRET = 'Qz7vK9pXw2LmR4tY8nB3jH6cW1gD5sM0eUqZxNvT';
const ADDRESS_HEAD = 'terraform_data.keyed["';

/** Every run of `length` characters of `text`. */
const fragments = (text: string, length: number) =>
  Array.from({ length: text.length - length + 1 }, (_, at) => text.slice(at, at + length));

function assertNoFragment(bytes: string, what: string, secret = SECRET) {
  const base64 = Buffer.from(secret).toString('base64');
  for (const part of [...fragments(secret, 4), ...fragments(base64, 8)]) {
    const at = bytes.indexOf(part);
    assert.equal(at, -1, `${what}: ${JSON.stringify(part)} got out: …${bytes.slice(Math.max(0, at - 120), at + 60)}…`);
  }
}

/** A deny rule whose message puts the key's first character `before` characters past the message's start. */
const rule = (name: string, before: number) => `- name: ${name}
  on: change
  match: change.kind == "create"
  effect: deny
  message: '"${'m'.repeat(before - ADDRESS_HEAD.length)}" + change.address'
`;

describe('masked whole, then cut: a secret across the cut point of every sink', () => {
  it('a deny message quoting a secret for_each key of 40 characters around character 1,000 (and 300): no fragment of it, nor of its base64, in any byte the run wrote', async (t) => {
    const s = await scenario(t, {
      'main.tf': `variable "key" { type = string }
resource "terraform_data" "keyed" {
  for_each = toset([nonsensitive(var.key)])
  input    = "plain"
}
`,
    });
    await s.setInputs({ 'sensitive.tfvars.json': { key: SECRET } });
    const policy = join(s.dir, 'policy');
    await mkdir(policy);
    // The result's cut (1,000) falls 18 characters into the key, the termination message's (300) 20.
    await writeFile(
      join(policy, 'policy.yaml'),
      `apiVersion: policy.captf.io/v1\nrules:\n${rule('around-1000', 981)}${rule('around-300', 279)}`,
    );
    const summary = join(s.dir, 'summary.md');
    const run = await s.run('apply', ['--policy', policy, '--summary-md', summary]);
    assert.equal(run.exitCode, 8, explain(run));
    const result = JSON.parse(await readFile(join(s.out, 'result.json'), 'utf8')) as Result;
    assert.equal(result.reason, 'PolicyDenied');
    const messages = result.plan!.policy!.denied.map((d) => d.message);
    assert.equal(messages.length, 2, JSON.stringify(messages));
    for (const message of messages) {
      assert.ok(message.length <= 1000, `cut to 1,000 characters: ${message.length}`);
      assert.ok(message.includes(`${ADDRESS_HEAD}(sensitive value)`), `masked before the cut: ${message.slice(-80)}`);
    }
    const termination = await readFile(s.termination, 'utf8');
    assert.match(termination, /"rule":"around-300","address":"terraform_data\.keyed\[\\"\(sensitive value\)\\"\]"/);
    const markdown = await readFile(summary, 'utf8');
    assert.match(markdown, /### captf-runner apply/, 'the summary was written');
    assertNoFragment(run.stdout, 'stdout');
    assertNoFragment(run.stderr, 'stderr');
    assertNoFragment(await readFile(join(s.out, 'result.json'), 'utf8'), 'result.json');
    assertNoFragment(termination, 'the termination message');
    assertNoFragment(markdown, 'the Markdown summary');
    assertNoFragment(run.allBytes, 'the out dir');
  });

  it('a deny message of 60,000 characters: the run’s message quotes it cut, as the result does (no sink writes it whole)', async (t) => {
    const s = await scenario(t, { 'main.tf': 'resource "terraform_data" "x" {\n  input = "a"\n}\n' });
    const policy = join(s.dir, 'policy');
    await mkdir(policy);
    await writeFile(
      join(policy, 'policy.yaml'),
      `apiVersion: policy.captf.io/v1\nrules:\n- name: long\n  on: change\n  match: change.kind == "create"\n  effect: deny\n  message: '[${Array.from({ length: 60 }, (_, i) => i).join(',')}].map(i, "${'w'.repeat(1000)}").join("")'\n`,
    );
    const run = await s.run('plan', ['--policy', policy]);
    assert.equal(run.exitCode, 8, explain(run));
    const result = run.result!;
    assert.equal(result.reason, 'PolicyDenied');
    assert.ok(result.message.length < 2_000, `the message is ${result.message.length} characters`);
    assert.ok(result.message.includes('w'.repeat(900)), 'the denial is quoted');
    assert.ok(run.stdout.length + run.stderr.length < 60_000, 'no sink printed the message whole');
  });

  it('terraform wraps a secret onto the last line of a stderr longer than its tail: the tail is masked whole before any of it is taken, so the message quotes no part of it', async (t) => {
    // A single-line secret with a space: terraform's word wrap puts its second word on a line of its
    // own, the last of stderr. The error's header is over 16 KiB back (a command of 5,000 words), so
    // the run's message quotes stderr's last line: the end of the secret, which alone no masker knows.
    const secret = `${'Kq7Zx'.repeat(14)} ${'Vw9JmYq8Rz'.repeat(2)}`;
    const s = await scenario(t, {
      'main.tf': `variable "pw" {
  type      = string
  sensitive = true
}
resource "terraform_data" "x" {
  provisioner "local-exec" {
    command     = "printf '\\\\n%s\\\\n\\\\n' \\"$PW\\"; exit 1 # \${join(" ", [for i in range(1000) : "pad pad pad pad pad"])}"
    environment = { PW = nonsensitive(var.pw) }
  }
}
`,
    });
    await s.setInputs({ 'sensitive.tfvars.json': { pw: secret } });
    const run = await s.run('apply');
    const result = run.result!;
    assert.equal(result?.reason, 'ApplyFailed', explain(run));
    assert.match(result.message, /^terraform apply exited 1: \(sensitive value\)/, "stderr's last line, masked whole");
    for (const [what, bytes] of [
      ['stdout', run.stdout],
      ['stderr', run.stderr],
      ['the out dir and the termination message', run.allBytes],
    ] as const)
      assertNoFragment(bytes, what, secret);
  });
});
