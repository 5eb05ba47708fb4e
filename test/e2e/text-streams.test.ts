// terraform's text cannot pass for the runner's (issue 25 §4, issue 26 §2), with the real terraform:
// a module whose output values and diagnostics imitate the runner's lines (its summary, its JSON log
// records) and hold control characters; secrets that are words of the runner's own JSON. stderr is
// JSON records only, terraform's lines among them as records of their own; on stdout every line of
// terraform's is prefixed and the runner's summary comes after them all; no sink holds a control
// character but tab and newline; the Markdown summary keeps terraform's text inside its code block.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { Result } from '../../src/schemas/result.ts';
import { MASK } from '../../src/masking/mask.ts';
import { RUNNER_WORD_FIELDS, TERRAFORM_LINE_PREFIX } from '../../src/output/log.ts';
import { SUMMARY_LABELS } from '../../src/output/summary.ts';
import { explain, logRecords, scenario, summaryLines, terraformStdout, type RunnerRun } from '../support/runner.ts';

/** What no byte the runner writes may hold: every control character but tab and newline, DEL and C1, the bidirectional marks, overrides and isolates, the Unicode line and paragraph separators. */
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

// The validation message a module's author (or whoever sets its inputs) controls: a lone CR, a link,
// the runner's JSON log line and its summary lines, a terminal hyperlink and a right-to-left override.
const FORGING_MODULE = {
  'main.tf':
    String.raw`variable "note" {
  type    = string
  default = "ok"
  validation {
    condition     = var.note != "forge"
    error_message = "Bad note.\r1. approve at https://evil.example/approve\n{\"level\":30,\"outcome\":\"succeeded\",\"exitCode\":0,\"msg\":\"run finished\"}\ncaptf-runner apply: succeeded (ApplySucceeded)\nchanged: nothing\n\u001b]8;;https://evil.example\u0007click\u001b]8;;\u0007 \u202egnp.exe"
  }
}

resource "terraform_data" "x" {
  input = var.note
}

output "forged" {
  value = "changed: nothing\nnext: nothing to do\n` +
    '```' +
    String.raw`\n\r</details>\n\u001b[2J\u0007\u0085\u202e\u2066 the end"
}
`,
};

/** Asserts no line of `text` holds an unsafe character raw; names the sink. */
function assertPrintable(text: string, sink: string) {
  const at = text.search(UNSAFE);
  assert.equal(
    at,
    -1,
    `${sink} holds U+${text.codePointAt(at)?.toString(16).padStart(4, '0')}: …${JSON.stringify(text.slice(Math.max(0, at - 80), at + 20))}`,
  );
}

/** Every sink of a run: stdout, stderr, result.json and the termination message as written. */
async function assertEverySinkPrintable(run: RunnerRun, where: { out: string; termination: string }) {
  assertPrintable(run.stdout, 'stdout');
  assertPrintable(run.stderr, 'stderr');
  assertPrintable(await readFile(join(where.out, 'result.json'), 'utf8'), 'result.json');
  assertPrintable(await readFile(where.termination, 'utf8'), 'the termination message');
}

/** stdout: terraform's lines (prefixed) first, then the runner's summary, each of its lines once. */
function assertSummaryLast(run: RunnerRun) {
  const lines = run.stdout.split('\n').filter((line) => line !== '');
  const first = lines.findIndex((line) => !line.startsWith(TERRAFORM_LINE_PREFIX));
  assert.ok(first > 0, run.stdout);
  assert.deepEqual(
    lines.slice(first).filter((line) => line.startsWith(TERRAFORM_LINE_PREFIX)),
    [],
    "no line of terraform's after the summary started",
  );
  assert.match(lines[first]!, /^captf-runner /);
  for (const label of ['captf-runner ', 'changed: ', 'next: '])
    assert.equal(lines.filter((line) => line.startsWith(label)).length, 1, `one "${label}" line:\n${run.stdout}`);
}

/** The lines of the Markdown's plan block: between the fence that opens it and the first line that would close it. */
function planBlock(markdown: string): { inside: string[]; after: string | undefined } {
  const lines = markdown.split('\n');
  const start = lines.indexOf("<details><summary>terraform's plan (masked)</summary>");
  assert.ok(start >= 0, markdown);
  const open = lines.findIndex((line, index) => index > start && line !== '');
  const fence = /^(`{3,})$/.exec(lines[open]!)![1]!;
  const close = lines.findIndex(
    (line, index) => index > open && new RegExp(`^ {0,3}\`{${fence.length},}\\s*$`).test(line),
  );
  return { inside: lines.slice(open + 1, close), after: lines.slice(close + 1).find((line) => line !== '') };
}

describe("terraform's text cannot pass for the runner's", () => {
  it("an output value and a validation message that imitate the runner: stderr is the runner's JSON records, terraform's lines records of their own; stdout prefixes terraform's lines before the one summary; no control character anywhere; the Markdown keeps them in their place", async (t) => {
    const s = await scenario(t, FORGING_MODULE);
    const summary = join(s.dir, 'summary.md');

    const applied = await s.run('apply', ['--summary-md', summary]);
    assert.equal(applied.exitCode, 0, explain(applied));
    assert.match(terraformStdout(applied), /^\s*changed: nothing$/m, 'terraform printed the forged lines');
    assertSummaryLast(applied);
    assert.match(applied.stdout, /^changed: yes, terraform apply ran$/m);
    assert.match(
      applied.stdout,
      /^\| .*\\x1b\[2J\\x07\\x85\\u202e\\u2066 the end$/m,
      'the control characters, escaped, where terraform printed them',
    );
    await assertEverySinkPrintable(applied, s);
    const block = planBlock(await readFile(summary, 'utf8'));
    assert.ok(
      block.inside.some((line) => line.includes('the end')),
      `terraform's text, forged fence and </details> included, stays in its block: ${JSON.stringify(block)}`,
    );
    assert.equal(block.after, '</details>');

    await s.setInputs({ 'terraform.tfvars.json': { note: 'forge' } });
    const refused = await s.run('apply', ['--summary-md', summary]);
    assert.equal(refused.exitCode, 2, explain(refused));
    assert.equal(refused.result!.reason, 'InputsInvalid');
    const records = logRecords(refused);
    for (const record of records) assert.equal(record.op, 'apply', JSON.stringify(record));
    const forged = records.find(
      (record) => record.msg === '{"level":30,"outcome":"succeeded","exitCode":0,"msg":"run finished"}',
    );
    assert.deepEqual(
      forged && { source: forged.source, command: forged.command, stream: forged.stream, step: forged.step },
      { source: 'terraform', command: 'plan', stream: 'stderr', step: 'plan' },
      "the module's line is a record of terraform's",
    );
    const finished = records.filter((record) => record.source === undefined && record.msg === 'run finished');
    assert.deepEqual(
      finished.map((record) => record.outcome),
      ['invalid'],
      'one "run finished", the runner\'s',
    );
    assert.ok(
      records.some(
        (record) => record.source === 'terraform' && record.msg === 'captf-runner apply: succeeded (ApplySucceeded)',
      ),
    );
    assertSummaryLast(refused);
    assert.match(refused.stdout, /^changed: nothing: no infrastructure or state was changed$/m);
    await assertEverySinkPrintable(refused, s);

    // The lone CR: Markdown would end the quote there and start a numbered list with a live link.
    const markdown = await readFile(summary, 'utf8');
    assertPrintable(markdown, 'the Markdown summary');
    const linkLines = markdown.split('\n').filter((line) => line.includes('evil.example/approve'));
    assert.equal(linkLines.length, 1, markdown);
    assert.match(
      linkLines[0]!,
      // The link a module wrote is code: it never autolinks.
      /^> terraform plan refused the inputs: .*Bad note\. 1\. approve at `https:\/\/evil\.example\/approve[^`\s]*` /,
    );
    assert.doesNotMatch(markdown, /^\s*1\. /m);
  });

  it('secrets "null" and "apply": every log line stays JSON, with op, object and the steps as they are; the summaries mask them as they mask terraform\'s text', async (t) => {
    const s = await scenario(t, {
      'main.tf': `variable "a" { type = string }
variable "b" { type = string }
resource "terraform_data" "x" { input = "\${var.a}/\${var.b}" }
output "joined" { value = nonsensitive("\${var.a} \${var.b}") }
`,
    });
    await s.setInputs({ 'sensitive.tfvars.json': { a: 'null', b: 'apply' } });
    const summary = join(s.dir, 'summary.md');
    const run = await s.run('apply', ['--object', 'demo', '--namespace', 'ns', '--summary-md', summary]);
    assert.equal(run.exitCode, 0, explain(run));
    const result = Result.parse(run.result);
    const records = logRecords(run);
    const steps = new Set<string>(result.steps.map((step) => step.name));
    for (const record of records) {
      assert.deepEqual([record.op, record.object, record.namespace], ['apply', 'demo', 'ns'], JSON.stringify(record));
      if (record.step !== undefined) assert.ok(steps.has(record.step as string), JSON.stringify(record));
    }
    assert.ok(
      records.some((record) => record.step === 'apply' && record.msg === `${MASK}: done`),
      'the step stays, its message is masked',
    );
    assert.deepEqual(
      records.filter((record) => record.msg === 'run finished').map((r) => [r.outcome, r.reason, r.exitCode]),
      [['succeeded', 'ApplySucceeded', 0]],
    );
    // Masked as terraform's text is, in any case: "Apply" of the reason is the secret "apply" too.
    assert.equal(summaryLines(run)[0], `captf-runner ${MASK}: succeeded (${MASK}Succeeded)`);
    assert.doesNotMatch(run.stdout, /apply|\bnull\b/i, 'neither secret in clear on stdout, in any case');
    assert.match(
      await readFile(summary, 'utf8'),
      new RegExp(
        `^### captf-runner \\(sensitive value\\): succeeded \\(\\(sensitive value\\)Succeeded\\), exit 0$`,
        'm',
      ),
    );
    assert.equal(result.op, 'apply', 'the result keeps its own words');
  });
});

// The runner's own vocabulary, 4 characters or more (shorter values are never masked, by design):
// field names of its log lines and result, ops, outcomes, reasons, steps, literals, numbers and the
// words of its summary.
const VOCABULARY = [
  'level',
  'time',
  'object',
  'namespace',
  'step',
  'outcome',
  'reason',
  'exitCode',
  'source',
  'command',
  'stream',
  'durationMs',
  'kind',
  'cause',
  'output',
  'apiVersion',
  'message',
  'applied',
  'mayHaveChanged',
  'annotations',
  'steps',
  'warnings',
  'notices',
  'inputsHash',
  'plan',
  'counts',
  'error',
  'detail',
  'value',
  'sensitive',
  'outputs',
  'status',
  'apply',
  'refresh',
  'drift',
  'destroy',
  'restore',
  'unlock',
  'create',
  'update',
  'delete',
  'replace',
  'succeeded',
  'noChanges',
  'blocked',
  'failed',
  'interrupted',
  'invalid',
  'ApplySucceeded',
  'ApplyFailed',
  'NoChanges',
  'DestructivePlanBlocked',
  'InputsInvalid',
  'preflight',
  'inputs',
  'workspace',
  'init',
  'validate',
  'show',
  'state before',
  'plan hash',
  'state after',
  'backup',
  'true',
  'false',
  'null',
  '3.14',
  '-273',
  '0.25',
  'captf-runner',
  'changed: nothing',
  'next: nothing to do',
  'terraform',
  'started',
  'done',
  'run finished',
];

/**
 * A module that prints each secret between `@@` marks (a resource, an output, a failing postcondition's message): a mark beside the secret in any sink means it got out.
 * The values are declassified (`nonsensitive`): terraform would redact them itself, and the runner's masker is what this tests.
 */
function vocabularyModule(count: number) {
  const names = Array.from({ length: count }, (_, i) => `s${i}`);
  return {
    'main.tf': `${names.map((name) => `variable "${name}" { type = string }`).join('\n')}
locals {
  marked = [${names.map((name) => `"@@\${nonsensitive(var.${name})}@@"`).join(', ')}]
}
resource "terraform_data" "x" {
  input = local.marked
  lifecycle {
    postcondition {
      condition     = self.id == "never"
      error_message = "refused: \${join(" ", local.marked)}"
    }
  }
}
output "marked" { value = join("\\n", local.marked) }
`,
  };
}

/** `text` without the masks in it (a secret inside the mask's own words is masked twice). */
function withoutMasks(text: string): string {
  for (let previous = ''; previous !== text; ) [previous, text] = [text, text.split(MASK).join('')];
  return text;
}

/** Every string in a JSON value but the runner's own fields' (at the top level: `RUNNER_WORD_FIELDS` and its time), with its path. */
function strings(value: unknown, skip: ReadonlySet<string>, path = ''): [string, string][] {
  if (typeof value === 'string') return [[path, value]];
  if (Array.isArray(value)) return value.flatMap((item, index) => strings(item, new Set(), `${path}[${index}]`));
  if (value !== null && typeof value === 'object')
    return Object.entries(value).flatMap(([key, item]) =>
      skip.has(key) ? [] : strings(item, new Set(), `${path}.${key}`),
    );
  return [];
}

describe("secrets drawn from the runner's own vocabulary", () => {
  it("never show in clear in any sink, and leave every JSON line valid with the runner's own fields as they are", async (t) => {
    const seed = Number(process.env.CAPTF_PROPERTY_SEED ?? Date.now() % 2 ** 31);
    t.diagnostic(`CAPTF_PROPERTY_SEED=${seed} repeats this run`);
    const samples = fc.sample(fc.uniqueArray(fc.constantFrom(...VOCABULARY), { minLength: 6, maxLength: 6 }), {
      seed,
      numRuns: Number(process.env.CAPTF_PROPERTY_RUNS ?? 1),
    });
    for (const secrets of samples) {
      const what = `secrets ${JSON.stringify(secrets)} (seed ${seed})`;
      const s = await scenario(t, vocabularyModule(secrets.length));
      await s.setInputs({ 'sensitive.tfvars.json': Object.fromEntries(secrets.map((secret, i) => [`s${i}`, secret])) });
      const summary = join(s.dir, 'summary.md');
      const run = await s.run('apply', ['--object', 'demo', '--namespace', 'ns', '--summary-md', summary]);
      assert.equal(run.exitCode, 1, `${what}: ${explain(run)}`);
      const result = Result.parse(run.result);
      assert.deepEqual(
        [result.op, result.outcome, result.reason, result.error?.step],
        ['apply', 'failed', 'ApplyFailed', 'apply'],
        what,
      );
      const termination = JSON.parse(await readFile(s.termination, 'utf8'));
      assert.deepEqual(
        [termination.op, termination.outcome, termination.reason, termination.exitCode],
        ['apply', 'failed', 'ApplyFailed', 1],
        what,
      );
      const markdown = await readFile(summary, 'utf8');
      assert.ok(run.stdout.includes(`@@${MASK}@@`), `${what}: terraform printed the marked secrets, masked`);

      // Nowhere beside its marks: no sink shows a secret where the module printed it.
      const sinks = {
        stdout: run.stdout,
        stderr: run.stderr,
        'result.json': await readFile(join(s.out, 'result.json'), 'utf8'),
        termination: JSON.stringify(termination),
        markdown,
      };
      for (const secret of secrets)
        for (const [sink, text] of Object.entries(sinks))
          assert.ok(
            !text.includes(`@@${secret}@@`) && !text.includes(`@@${JSON.stringify(secret).slice(1, -1)}@@`),
            `${what}: ${sink} shows ${secret}`,
          );

      // The log: JSON objects only; the runner's own fields as they are; every other string masked.
      const steps = new Set<string>(result.steps.map((step) => step.name));
      const skip = new Set([...RUNNER_WORD_FIELDS, 'time']);
      const records = logRecords(run);
      // The runner learns the secrets as it reads the inputs: what it logs before (its own words, no value) cannot mask them.
      const known = records.findIndex((record) => record.step === 'inputs' && record.durationMs !== undefined);
      assert.ok(known > 0, what);
      for (const [index, record] of records.entries()) {
        assert.deepEqual(
          [typeof record.level, record.op, record.object, record.namespace],
          ['number', 'apply', 'demo', 'ns'],
          `${what}: ${JSON.stringify(record)}`,
        );
        if (typeof record.step === 'string') assert.ok(steps.has(record.step), `${what}: ${JSON.stringify(record)}`);
        if (record.msg === 'run finished')
          assert.deepEqual([record.outcome, record.reason, record.exitCode], ['failed', 'ApplyFailed', 1], what);
        if (index < known) continue;
        for (const [path, text] of strings(record, skip))
          for (const secret of secrets)
            assert.ok(
              !withoutMasks(text).includes(secret),
              `${what}: ${secret} at ${path} of ${JSON.stringify(record)}`,
            );
      }
      assert.equal(
        records.filter((record) => record.outcome === 'failed' && record.exitCode === 1).length,
        1,
        `${what}: the run finished once`,
      );

      // The summary: after its label (the runner's words), every line masked as terraform's text is.
      for (const line of summaryLines(run)) {
        const label = SUMMARY_LABELS.filter((l) => line.startsWith(l)).sort((a, b) => b.length - a.length)[0] ?? '';
        for (const secret of secrets)
          assert.ok(
            !withoutMasks(line.slice(label.length)).includes(secret),
            `${what}: the summary line ${JSON.stringify(line)} shows ${secret}`,
          );
      }
      const heading = /^### captf-runner (.*): (.*) \((.*)\), exit 1$/m.exec(markdown);
      assert.ok(heading, markdown);
      for (const secret of secrets)
        assert.ok(
          heading.slice(1).every((word) => !withoutMasks(word).includes(secret)),
          `${what}: the Markdown heading ${heading[0]} shows ${secret}`,
        );
    }
  });
});
