// The captured corpus: every case is complete and loads, and means what the README says it means
// (its exit codes and a key line), so a regenerated corpus whose meaning changed fails here.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { CAPTURED_WORKDIR, CAPTURED_OUTPUT_DIR, capturedCases, capturedOutput } from './terraform-output.ts';

interface DocumentedCase {
  exitCode: number;
  jsonExitCode?: number;
  /** Text terraform's stdout or stderr contains; undefined when both are empty ("(none)"). */
  key?: string;
}

/** The README's case table: | `case` | exit[ / json exit] | `key` | what |. */
function documentedCases(): Map<string, DocumentedCase> {
  const readme = readFileSync(join(CAPTURED_OUTPUT_DIR, 'README.md'), 'utf8');
  const cases = new Map<string, DocumentedCase>();
  for (const line of readme.split('\n')) {
    const row = /^\| `([a-z0-9-]+)` \| (\d+)(?: \/ (\d+))? \| `([^`]+)` \| .+ \|$/.exec(line);
    if (!row) continue;
    const [, name, exit, jsonExit, key] = row;
    assert.ok(!cases.has(name!), `README.md lists ${name} twice`);
    cases.set(name!, {
      exitCode: Number(exit),
      ...(jsonExit === undefined ? {} : { jsonExitCode: Number(jsonExit) }),
      ...(key === '(none)' ? {} : { key: key! }),
    });
  }
  return cases;
}

const KNOWN_FILES = new Set(['command.json', 'stdout.txt', 'stderr.txt', 'json-stdout.txt', 'json-stderr.txt']);
/** The corpus stays small enough to read in a review; the largest file is about 2.5 KiB. */
const MAX_FILE_BYTES = 16 * 1024;

describe('the captured terraform output', () => {
  const cases = capturedCases();
  const documented = documentedCases();

  test('the README lists exactly the captured cases', () => {
    assert.ok(cases.length >= 40, `only ${cases.length} cases in ${CAPTURED_OUTPUT_DIR}`);
    assert.deepEqual([...documented.keys()].sort(), cases);
  });

  test('every case was captured from the same terraform, as the runner runs it', () => {
    const versions = new Set(cases.map((name) => capturedOutput(name).version));
    assert.deepEqual([...versions], ['1.11.4']);
    for (const name of cases) {
      const output = capturedOutput(name);
      assert.equal(output.cwd, `${CAPTURED_WORKDIR}/root`, name);
      assert.equal(output.env.TF_IN_AUTOMATION, '1', name);
      assert.equal(output.env.TF_INPUT, '0', name);
      assert.equal(output.env.CHECKPOINT_DISABLE, '1', name);
      assert.equal(output.timedOut, false, `${name}: terraform was killed after the script's bound`);
    }
  });

  for (const name of cases) {
    test(`${name}: complete, and it means what the README says`, () => {
      const dir = join(CAPTURED_OUTPUT_DIR, name);
      const output = capturedOutput(name);
      const files = readdirSync(dir);
      assert.deepEqual(
        files.filter((file) => !KNOWN_FILES.has(file)),
        [],
        `unexpected files in ${dir}`,
      );
      assert.equal(
        files.includes('json-stdout.txt'),
        output.json !== undefined,
        `${name}: json-*.txt without a json command, or the reverse`,
      );
      for (const file of files)
        assert.ok(
          statSync(join(dir, file)).size <= MAX_FILE_BYTES,
          `${join(dir, file)} is larger than ${MAX_FILE_BYTES} bytes`,
        );

      // No path of the capturing machine: the temp dir is always the placeholder.
      for (const text of [
        output.stdout,
        output.stderr,
        output.json?.stdout ?? '',
        output.json?.stderr ?? '',
        output.argv.join(' '),
      ]) {
        assert.doesNotMatch(
          text,
          /\/tmp\/|captf-capture-/,
          `${name}: a temp path was not replaced by ${CAPTURED_WORKDIR}`,
        );
      }

      const expected = documented.get(name)!;
      assert.equal(
        output.exitCode,
        expected.exitCode,
        `${name}: terraform exited ${output.exitCode}, the README says ${expected.exitCode}`,
      );
      assert.equal(
        output.json?.exitCode,
        expected.jsonExitCode,
        `${name}: the -json form exited ${output.json?.exitCode}, the README says ${expected.jsonExitCode}`,
      );
      const printed = output.stdout + output.stderr;
      if (expected.key === undefined) assert.equal(printed, '', `${name}: the README says terraform printed nothing`);
      else
        assert.ok(
          printed.includes(expected.key),
          `${name}: terraform's output does not contain the README's key "${expected.key}"`,
        );
    });
  }

  test('a case that does not exist is named in the error', () => {
    assert.throws(
      () => capturedOutput('no-such-case'),
      /no captured terraform output named "no-such-case".*apply-stale-plan/,
    );
    assert.throws(() => capturedOutput('../README.md'), /no captured terraform output named/);
  });
});
