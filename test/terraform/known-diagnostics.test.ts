// The diagnostics that fail the same way on every retry (src/terraform/known-diagnostics.ts), on
// what terraform 1.11.4 really printed (test/fixtures/terraform-output): the table names every case
// that is ImageInvalid (exit 4) or InputsInvalid (exit 2); every other captured failure keeps its
// command's reason (exit 1). And how a diagnostic is reported: where it points, never a value.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { printedDiagnostics } from '../../src/terraform/diagnostics.ts';
import {
  KNOWN_DIAGNOSTICS,
  recurringFailure,
  reportedDiagnostic,
  reportedDiagnostics,
} from '../../src/terraform/known-diagnostics.ts';
import { diagnosedError, failure, placeOf } from '../../src/terraform/terraform.ts';
import { Result, DIAGNOSTIC_TEXT_BYTES, DIAGNOSTICS_LIMIT } from '../../src/schemas/result.ts';
import { exitCodeOf } from '../../src/run/exit-codes.ts';
import { RunnerError } from '../../src/errors.ts';
import { Masker } from '../../src/masking/mask.ts';
import { CAPTURED_WORKDIR, capturedCases, capturedOutput, capturedRun } from '../support/terraform-output.ts';

const cases = capturedCases();

/** What the runner reads a failed case as: validate through its -json report (the runner's form), every other command through stderr. */
function runnerError(name: string): RunnerError | undefined {
  const output = capturedOutput(name);
  if (output.argv[0] === 'validate') {
    const json = output.json!;
    if (json.exitCode === 0) return undefined;
    const report = JSON.parse(json.stdout) as {
      diagnostics: {
        severity: 'error' | 'warning';
        summary: string;
        detail?: string;
        range?: { filename: string; start: { line: number } };
      }[];
    };
    const printed = report.diagnostics.map((d) => ({
      severity: d.severity,
      summary: d.summary,
      detail: d.detail ?? '',
      ...(d.range ? { file: d.range.filename, line: d.range.start.line } : {}),
    }));
    return new RunnerError(
      diagnosedError('validate', printed, true, placeOf(output.cwd, json.argv), {
        reason: 'ValidateFailed',
        message: 'not valid',
      }),
    );
  }
  const run = capturedRun(name);
  return run.meaning === 'error' ? failure(run, 'TerraformFailed') : undefined;
}

const image = { reason: 'ImageInvalid', exitCode: 4 };
const inputs = { reason: 'InputsInvalid', exitCode: 2 };
/** case → what the runner makes of it, and where the message says terraform points. */
const RECURRING: Record<string, { reason: string; exitCode: number; names: string }> = {
  'init-syntax-unclosed-block': { ...image, names: 'main.tf:1: Unclosed configuration block' },
  'validate-syntax-unclosed-block': { ...image, names: 'main.tf:1: Unclosed configuration block' },
  'init-syntax-missing-value': {
    ...image,
    names: 'main.tf:2: Invalid expression: Expected the start of an expression',
  },
  'validate-syntax-missing-value': { ...image, names: 'main.tf:2: Invalid expression' },
  'init-syntax-unterminated-string': { ...image, names: 'main.tf:2: Invalid multi-line string' },
  'validate-syntax-unterminated-string': { ...image, names: 'main.tf:2: Invalid multi-line string' },
  'init-syntax-stray-brace': { ...image, names: 'main.tf:4: Argument or block definition required' },
  'validate-syntax-stray-brace': { ...image, names: 'main.tf:4: Argument or block definition required' },
  'init-syntax-in-called-module': { ...image, names: 'modules/network/main.tf:2: Invalid expression' },
  // validate without init (the syntax error stopped it): a configuration error at main.tf all the same.
  'validate-syntax-in-called-module': { ...image, names: 'main.tf:1: Module not installed' },
  'validate-invalid-reference': { ...image, names: 'main.tf:2: Reference to undeclared resource' },
  'validate-undeclared-variable-reference': { ...image, names: 'main.tf:2: Reference to undeclared input variable' },
  'validate-unsupported-argument': { ...image, names: 'main.tf:2: Unsupported argument' },
  'init-backend-unknown-type': { ...image, names: 'main.tf:2: Unsupported backend type' },
  'init-module-source-missing': { ...image, names: 'Unreadable module directory' },
  'init-provider-not-in-image-mirror': { ...image, names: 'was not found in any of the search locations' },
  'init-provider-not-in-image-mirror-readonly-lockfile': {
    ...image,
    names: 'was not found in any of the search locations',
  },
  'init-provider-in-image-mirror-readonly-lockfile-missing': {
    ...image,
    names: 'Provider dependency changes detected',
  },
  'validate-output-refers-to-sensitive-values': { ...image, names: 'main.tf:5: Output refers to sensitive values' },
  'validate-for-each-sensitive': { ...image, names: 'main.tf:6: Invalid for_each argument' },
  'plan-variable-missing': { ...inputs, names: 'main.tf:1: No value for required variable' },
  'plan-variable-wrong-type-number': {
    ...inputs,
    names: 'terraform.tfvars.json (variable replicas): Invalid value for input variable',
  },
  'plan-variable-wrong-type-list': {
    ...inputs,
    names: 'terraform.tfvars.json (variable cluster_name): Invalid value for input variable',
  },
  'plan-variable-wrong-type-sensitive': {
    ...inputs,
    names: 'main.tf:1 (variable pin): Invalid value for input variable',
  },
  'plan-variable-wrong-type-from-sensitive-file': {
    ...inputs,
    names: 'sensitive.tfvars.json (variable pin): Invalid value for input variable',
  },
  'plan-variable-validation-failed': {
    ...inputs,
    names: 'terraform.tfvars.json (variable replicas): Invalid value for variable',
  },
  // A precondition that reads only variables; one that reads a local (plan-precondition-failed-local) keeps exit 1.
  'plan-precondition-failed': { ...inputs, names: 'main.tf:11: Resource precondition failed' },
  // file() of a file the module does not ship: the inputs' when a variable is in the path, else the module's.
  'plan-file-not-shipped': { ...inputs, names: 'main.tf:6: Invalid function argument' },
  'plan-file-not-shipped-by-module': { ...image, names: 'main.tf:3: Invalid function argument' },
};

describe('diagnostics that fail the same way on every retry (recurringFailure)', () => {
  it('on every captured case: the listed ones exit 4 or 2 naming where terraform points, every other failure keeps exit 1', () => {
    for (const name of Object.keys(RECURRING))
      assert.ok(cases.includes(name), `the table names ${name}, which is not in the corpus`);
    let failures = 0;
    for (const name of cases) {
      const error = runnerError(name);
      if (!error) continue;
      failures++;
      const expected = RECURRING[name];
      const exitCode = exitCodeOf(error.reason, error);
      if (!expected) {
        assert.notEqual(error.kind, 'image', name);
        assert.notEqual(error.kind, 'usage', name);
        assert.ok(exitCode === 1, `${name} exits ${exitCode}`);
        continue;
      }
      assert.equal(error.reason, expected.reason, name);
      assert.equal(exitCode, expected.exitCode, name);
      assert.ok(error.message.includes(expected.names), `${name}: ${error.message}`);
      assert.ok(!error.message.includes(CAPTURED_WORKDIR), `${name} names a workdir path: ${error.message}`);
    }
    assert.ok(failures > 30, 'the corpus holds the failures');
  });

  it('every entry of the list decides at least one captured case (none is untested)', () => {
    // validate's text form (stderr) prints the summaries of its -json form.
    const decided = new Set(
      Object.keys(RECURRING).flatMap((name) => printedDiagnostics(capturedOutput(name).stderr).map((d) => d.summary)),
    );
    for (const entry of KNOWN_DIAGNOSTICS)
      assert.ok(decided.has(entry.summary), `${entry.summary} decides no captured case`);
    // An entry read by its references decides the case whose references it names, and no other.
    const noted = (name: string) => printedDiagnostics(capturedOutput(name).stderr)[0]!.references;
    assert.deepEqual(noted('plan-precondition-failed'), ['var.greeting']);
    assert.deepEqual(noted('plan-precondition-failed-local'), ['local.shout']);
    assert.deepEqual(
      noted('plan-file-not-shipped'),
      ['path.module', 'var.role'],
      'never "while calling", never a value',
    );
    assert.deepEqual(noted('plan-file-not-shipped-by-module'), ['each.key', 'path.module']);
    assert.equal(
      recurringFailure('plan', printedDiagnostics(capturedOutput('plan-precondition-failed-local').stderr), true),
      undefined,
    );
  });

  it('one error not on the list keeps the failure retryable, and so does a stderr cut to its tail', () => {
    const missing = printedDiagnostics(capturedOutput('plan-variable-missing').stderr);
    const other = printedDiagnostics(capturedOutput('plan-precondition-failed-local').stderr);
    assert.equal(recurringFailure('plan', missing, true)?.means, 'inputs');
    assert.equal(recurringFailure('plan', [...missing, ...other], true), undefined);
    assert.equal(recurringFailure('plan', missing, false), undefined);
    // A provider the registry could not be asked for (the network may come back) is not the image's.
    assert.equal(
      recurringFailure('init', printedDiagnostics(capturedOutput('init-provider-not-installable').stderr), true),
      undefined,
    );
  });

  it("a configuration error is one at a line of the module's files, said by validate or by init after its preamble", () => {
    const located = {
      severity: 'error' as const,
      summary: 'Unsupported block type',
      detail: 'Blocks of type "resrouce" are not expected here.',
      file: 'main.tf',
      line: 3,
    };
    const preamble = printedDiagnostics(capturedOutput('init-syntax-missing-value').stderr)[0]!;
    assert.equal(recurringFailure('validate', [located], true, '/w/root')?.means, 'image');
    assert.equal(
      recurringFailure('validate', [{ ...located, file: '/w/root/modules/a/main.tf' }], true, '/w/root')?.means,
      'image',
    );
    assert.equal(recurringFailure('init', [preamble, located], true, '/w/root')?.means, 'image');
    // Without the preamble init's located error may be the network's (a registry): not read so.
    assert.equal(recurringFailure('init', [located], true, '/w/root'), undefined);
    // plan reads the state and the world: its located errors are not read so.
    assert.equal(recurringFailure('plan', [located], true, '/w/root'), undefined);
    // Nowhere, outside the module, in the runner's own file, in a file that is no configuration: not the module's.
    for (const where of [
      { file: undefined, line: undefined },
      { file: '/w/private/x.tf' },
      { file: 'captf_runner_inputs_hash.tf' },
      { file: '../x.tf' },
      { file: 'terraform.tfvars.json' },
    ])
      assert.equal(
        recurringFailure('validate', [{ ...located, ...where }], true, '/w/root'),
        undefined,
        JSON.stringify(where),
      );
    // One error terraform points nowhere beside it: not every error is the module's.
    assert.equal(
      recurringFailure(
        'init',
        [preamble, located, { severity: 'error', summary: 'Failed to read something', detail: '' }],
        true,
        '/w/root',
      ),
      undefined,
    );
  });

  it('an apply is never read so: a module printing a listed summary does not change the exit code', () => {
    const run = {
      ...capturedRun('apply-provisioner-failed'),
      stderrTail: capturedOutput('plan-variable-missing').stderr,
    };
    const error = failure(run, 'ApplyFailed');
    assert.equal(error.reason, 'ApplyFailed');
    assert.equal(exitCodeOf(error.reason, error), 1);
  });
});

describe('how a diagnostic is reported (error.detail.diagnostics)', () => {
  it('file relative to the module root and its line; a variables file by its name and the variable, never the workdir copy or a value', () => {
    const missing = failure(capturedRun('plan-variable-missing'), 'PlanFailed');
    assert.deepEqual(missing.detail?.diagnostics, [
      {
        severity: 'error',
        summary: 'No value for required variable',
        detail:
          'The root module input variable "replicas" is not set, and has no default value. Use a -var or -var-file command line argument to provide a value for this variable.',
        file: 'main.tf',
        line: 1,
      },
    ]);
    const fromSecret = failure(capturedRun('plan-variable-wrong-type-from-sensitive-file'), 'PlanFailed');
    // terraform quotes the line of the canonical copy, value and all: only the variable's name is kept.
    assert.match(capturedOutput('plan-variable-wrong-type-from-sensitive-file').stderr, /S3CRET-PIN-VALUE/);
    assert.deepEqual(fromSecret.detail?.diagnostics, [
      {
        severity: 'error',
        summary: 'Invalid value for input variable',
        detail: 'The given value is not suitable for var.pin declared at main.tf:1,1-15: a number is required.',
        file: 'sensitive.tfvars.json',
        variable: 'pin',
      },
    ]);
    assert.ok(!JSON.stringify(fromSecret.detail).includes('S3CRET'));
    assert.ok(!fromSecret.message.includes('S3CRET'));
    const sensitive = failure(capturedRun('plan-variable-wrong-type-sensitive'), 'PlanFailed');
    assert.equal(
      (sensitive.detail?.diagnostics as { detail: string }[])[0]!.detail,
      'The given value is not suitable for var.pin, which is sensitive: a number is required. Invalid value defined at terraform.tfvars.json.',
    );
    // The value terraform notes under the source (│ var.replicas is 0) is where it points, never kept.
    const validation = failure(capturedRun('plan-variable-validation-failed'), 'PlanFailed');
    assert.ok(!JSON.stringify(validation.detail).includes('is 0'));
    for (const name of cases) {
      const error = runnerError(name);
      for (const d of (error?.detail?.diagnostics as { file?: string }[] | undefined) ?? [])
        assert.ok(!d.file?.startsWith('/'), `${name}: ${d.file}`);
    }
  });

  it('a path outside the module root is no file; every diagnostic fits the result schema', () => {
    const place = { root: '/w/root', varFiles: ['/w/private/terraform.tfvars.json'] };
    assert.deepEqual(
      reportedDiagnostic(
        { severity: 'error', summary: 's', detail: '', file: '/w/private/plan.tfplan', line: 3 },
        place,
      ),
      { severity: 'error', summary: 's' },
    );
    assert.deepEqual(
      reportedDiagnostic(
        {
          severity: 'warning',
          summary: 's',
          detail: 'see /w/root/modules/a/main.tf:3,1-2',
          file: '/w/root/modules/a/main.tf',
          line: 3,
        },
        place,
      ),
      { severity: 'warning', summary: 's', detail: 'see modules/a/main.tf:3,1-2', file: 'modules/a/main.tf', line: 3 },
    );
    const error = failure(capturedRun('init-syntax-unclosed-block'), 'InitFailed');
    const result = Result.shape.error.unwrap().parse({
      kind: error.kind,
      reason: error.reason,
      step: error.step,
      message: error.message,
      detail: error.detail,
    });
    assert.equal(result.detail?.diagnostics?.[1]?.file, 'main.tf');
  });

  it(`at most ${DIAGNOSTICS_LIMIT} entries, each text at most ${DIAGNOSTIC_TEXT_BYTES} bytes, masked before it is cut`, () => {
    const secret = 'hunter2-correct-horse-battery';
    const masker = new Masker();
    masker.add(secret, 'test');
    // The secret straddles the cut: cut first, its start would show.
    const long = `${'é'.repeat(500)}${secret}${'x'.repeat(2000)}`;
    const many = Array.from({ length: 30 }, (_, i) => ({
      severity: 'error' as const,
      summary: `No value for required variable ${i}`,
      detail: long,
    }));
    const reported = reportedDiagnostics(many, { root: '/r', varFiles: [], mask: (t) => masker.mask(t) });
    assert.equal(reported.diagnostics.length, DIAGNOSTICS_LIMIT);
    assert.equal(reported.diagnosticsTotal, 30);
    for (const d of reported.diagnostics) {
      assert.ok(Buffer.byteLength(d.detail!) <= DIAGNOSTIC_TEXT_BYTES);
      assert.ok(!d.detail!.includes('hunter'), 'no part of the secret');
      assert.match(d.detail!, /\(sensitive value\)/);
      assert.ok(d.detail!.endsWith('…'));
    }
  });
});
