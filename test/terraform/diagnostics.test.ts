// Every rule that reads terraform's human output (src/terraform/diagnostics.ts), on what terraform
// 1.11.4 really printed (test/fixtures/terraform-output). A rule table names the cases it must
// recognise, with what it reads from them; every other captured case is the proof that it does
// not fire where it must not.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  detectLockError,
  diagnose,
  initProblem,
  isStalePlan,
  lastDiagnostic,
  lastLine,
  providersInInitOutput,
  rfc3339,
  type LockReport,
} from '../../src/terraform/diagnostics.ts';
import { failure, TerraformFailed } from '../../src/terraform/terraform.ts';
import { CAPTURED_WORKDIR, capturedCases, capturedOutput, capturedRun } from '../support/terraform-output.ts';

const cases = capturedCases();
const stderrOf = (name: string) => capturedOutput(name).stderr;

/** Checks `rule` on every captured case: `expected` for the named ones, `otherwise` for all others. */
function table<T>(
  rule: (name: string) => T,
  expected: Record<string, (value: T, name: string) => void>,
  otherwise: (value: T, name: string) => void,
) {
  for (const name of Object.keys(expected))
    assert.ok(cases.includes(name), `the table names ${name}, which is not in the corpus`);
  for (const name of cases) (expected[name] ?? otherwise)(rule(name), name);
}

/** The value of `Field:` in the case's Lock Info, as terraform printed it. */
const printed = (name: string, field: string) =>
  new RegExp(`^\\s*${field}:[ \\t]*(.*)$`, 'm').exec(stderrOf(name))?.[1]?.trim();

describe('the lock holder (detectLockError)', () => {
  it('tells a lock time in RFC 3339, UTC, whichever form terraform wrote it in', () => {
    assert.equal(rfc3339('2026-12-01 23:35:39.27 +0000 UTC'), '2026-12-01T23:35:39.27Z', "Go's form, on stderr");
    assert.equal(rfc3339('2026-12-01 11:30:41.694834055 +0000 UTC'), '2026-12-01T11:30:41.694834055Z');
    assert.equal(rfc3339('2026-12-01T23:35:39.270718Z'), '2026-12-01T23:35:39.270718Z', 'the lock info file');
    assert.equal(rfc3339('2026-12-02 01:35:39 +0200 CEST'), '2026-12-01T23:35:39Z', 'another zone, in UTC');
    assert.equal(rfc3339('2026-12-01T23:35:39+02:00'), '2026-12-01T21:35:39Z');
    assert.equal(rfc3339('yesterday'), undefined);
  });

  it('reads the holder from the local backend, and never from pg (hand-written messages)', () => {
    const local = `Error: Error acquiring the state lock\n\nError message: resource temporarily unavailable\nLock Info:\n  ID:        1b2c\n  Path:      terraform.tfstate\n  Operation: OperationTypeApply\n  Who:       runner@pod\n  Version:   1.11.4\n  Created:   2026-11-30 01:00:00 UTC\n`;
    // The holder's host is who's hostname (in a pod, the pod's name); its time RFC 3339 in UTC.
    assert.deepEqual(detectLockError(local), {
      holderKnown: true,
      id: '1b2c',
      path: 'terraform.tfstate',
      operation: 'OperationTypeApply',
      who: 'runner@pod',
      host: 'pod',
      created: '2026-11-30T01:00:00Z',
    });
    const pg = `Error: Error acquiring the state lock\n\nError message: Workspace is already locked: default\nLock Info:\n  ID:        9999\n  Who:       me@here\n`;
    assert.deepEqual(detectLockError(pg), { holderKnown: false });
    assert.equal(detectLockError('Error: something else'), undefined);
  });

  it('on every captured case', () => {
    const localHolder = (report: LockReport | undefined, name: string) => {
      assert.deepEqual(
        report,
        {
          holderKnown: true,
          id: printed(name, 'ID'),
          path: `${CAPTURED_WORKDIR}/state/terraform.tfstate`,
          operation: 'OperationTypeApply', // the holder's apply, not the waiting command
          who: printed(name, 'Who'),
          host: printed(name, 'Who')!.split('@')[1],
          created: rfc3339(printed(name, 'Created')!),
        },
        name,
      );
      assert.match(report!.created!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z$/, name);
      assert.match(report!.id!, /^[0-9a-f-]{36}$/, name);
    };
    // pg prints the waiting command's own lock info (its own operation, no path): nobody is named.
    const pgOwnRequest = (report: LockReport | undefined, name: string) =>
      assert.deepEqual(report, { holderKnown: false }, name);
    table(
      (name) => detectLockError(stderrOf(name)),
      {
        'lock-local-held-plan': localHolder,
        'lock-local-held-probe': localHolder,
        'lock-pg-held-plan': pgOwnRequest,
        'lock-pg-held-probe': pgOwnRequest,
        'lock-pg-creating-plan': pgOwnRequest,
      },
      (report, name) => assert.equal(report, undefined, name),
    );
    // The capture checked it: the id the local backend prints is the one in the holder's own lock info.
    assert.equal(capturedOutput('lock-local-held-plan').observed.printedLockIdIsHolders, true);
  });
});

describe('the stale saved plan (isStalePlan)', () => {
  it('on every captured case', () => {
    table(
      (name) => isStalePlan(stderrOf(name)),
      { 'apply-stale-plan': (stale) => assert.equal(stale, true) },
      (stale, name) => assert.equal(stale, false, name),
    );
  });
});

describe("init's hints (initProblem)", () => {
  it('on every captured case', () => {
    const provider = (problem: ReturnType<typeof initProblem>, name: string) =>
      assert.deepEqual(problem, { kind: 'providerNotInstallable' }, name);
    table(
      (name) => initProblem(stderrOf(name)),
      {
        'init-provider-not-installable': provider,
        'init-provider-not-installable-readonly-lockfile': provider,
        'init-provider-not-in-image-mirror': provider,
        'init-provider-not-in-image-mirror-readonly-lockfile': provider,
        // The provider installed, and the read-only lock file cannot record it (the message wraps "lock\nfile").
        'init-provider-in-image-mirror-readonly-lockfile-missing': (problem) =>
          assert.deepEqual(problem, { kind: 'lockFile' }),
      },
      (problem, name) => assert.equal(problem, undefined, name),
    );
  });
});

describe("terraform's last error on one line (lastDiagnostic)", () => {
  it('the summary and the paragraph that says what is wrong, past the location and the quoted source', () => {
    const expected: Record<string, string> = {
      'apply-stale-plan':
        'Error: Saved plan is stale The given plan file can no longer be applied because the state was changed by another operation after the plan was created.',
      'apply-provisioner-failed':
        "Error: local-exec provisioner error Error running command 'echo provisioning; exit 1': exit status 1. Output: provisioning",
      'apply-errored-plan':
        'Error: Cannot apply incomplete plan Terraform encountered an error when generating this plan, so it cannot be applied.',
      'init-backend-unknown-type': 'Error: Unsupported backend type There is no backend type named "nonexistent".',
      'init-syntax-unclosed-block':
        'Error: Unclosed configuration block There is no closing brace for this block before the end of the file. This may be caused by incorrect brace nesting elsewhere in this file.',
      'plan-variable-missing':
        'Error: No value for required variable The root module input variable "replicas" is not set, and has no default value. Use a -var or -var-file command line argument to provide a value for this variable.',
      'plan-variable-wrong-type-sensitive': `Error: Invalid value for input variable The given value is not suitable for var.pin, which is sensitive: a number is required. Invalid value defined at ${CAPTURED_WORKDIR}/private/terraform.tfvars.json:2,10-28.`,
      'validate-unsupported-argument':
        'Error: Unsupported argument An argument named "inptu" is not expected here. Did you mean "input"?',
      // The values terraform notes under the quoted source (├─ and │) are where it points, not what it says.
      'plan-precondition-failed': 'Error: Resource precondition failed The greeting must be longer than 10 characters.',
      'plan-variable-validation-failed': 'Error: Invalid value for variable replicas must be at least 1.',
      'plan-evaluation-error':
        'Error: Invalid function argument Invalid value for "v" parameter: cannot convert "three" to number; given string must be a decimal representation of a number.',
      'plan-evaluation-error-sensitive':
        'Error: Invalid function argument Invalid value for "v" parameter: cannot convert this sensitive string to number.',
    };
    for (const [name, summary] of Object.entries(expected)) assert.equal(lastDiagnostic(stderrOf(name)), summary, name);
  });

  it('the same in the frame terraform draws without -no-color (╷ │ ╵)', () => {
    for (const name of ['plan-precondition-failed', 'apply-provisioner-failed', 'plan-variable-missing']) {
      const lines = stderrOf(name)
        .replace(/^\n|\n$/g, '')
        .split('\n');
      const framed = ['', '╷', ...lines.map((line) => (line ? `│ ${line}` : '│')), '╵', ''].join('\n');
      assert.equal(lastDiagnostic(framed), lastDiagnostic(stderrOf(name)), name);
    }
  });

  it('undefined where terraform printed no Error: diagnostic', () => {
    for (const name of cases.filter((c) => !/^Error:/m.test(stderrOf(c))))
      assert.equal(lastDiagnostic(stderrOf(name)), undefined, name);
    for (const name of [
      'init-ok',
      'plan-create',
      'lock-local-probe-no-state',
      'state-push-lower-serial',
      'force-unlock-local-not-locked',
    ]) {
      assert.equal(lastDiagnostic(stderrOf(name)), undefined, name);
    }
  });
});

describe('the last-line fallback (lastLine)', () => {
  it('the last line terraform printed, or nothing', () => {
    assert.equal(lastLine(stderrOf('lock-local-probe-no-state')), 'to point the command to a specific state location.');
    assert.equal(lastLine(stderrOf('init-ok')), '');
    // state push and force-unlock print no Error: diagnostic, only a line (without colour: they get -no-color).
    assert.equal(
      lastLine(stderrOf('state-push-lower-serial')),
      'Failed to write state: cannot import state with serial 2 over newer state with serial 3',
    );
    assert.equal(
      lastLine(stderrOf('state-push-other-lineage')),
      'Failed to write state: cannot import state with lineage "99999999-8888-4777-8666-555555555555" over unrelated state with lineage "11111111-2222-4333-8444-555555555555"',
    );
    assert.equal(lastLine(stderrOf('force-unlock-local-not-locked')), 'Failed to unlock state: LocalState not locked');
  });

  it("never a diagnostic's frame alone: the last line with words in it", () => {
    const warning =
      'There are some problems with the CLI configuration:\n╷\n│ Warning: Unable to open CLI configuration file\n│\n│ The CLI configuration file at "/root/.terraformrc" does not exist.\n╵\n\n';
    assert.equal(lastLine(warning), 'The CLI configuration file at "/root/.terraformrc" does not exist.');
    assert.equal(lastLine('╷\n│\n╵\n'), '');
  });
});

describe('the providers init looked for (providersInInitOutput)', () => {
  it('reads the providers init looked for (hand-written progress lines)', () => {
    const lines = [
      'Initializing provider plugins...',
      '- terraform.io/builtin/terraform is built in to Terraform',
      '- Finding latest version of hashicorp/null...',
      '- Finding example.com/acme/thing versions matching "~> 3.0"...',
      '- Finding latest version of hashicorp/null...',
      '- Installing hashicorp/null v3.2.0...',
    ];
    assert.deepEqual(providersInInitOutput(lines), ['example.com/acme/thing', 'hashicorp/null']);
  });

  it('on every captured init: only a provider init had to look for (built-in ones never; a locked one is reused)', () => {
    const lines = (name: string) => `${capturedOutput(name).stdout}${capturedOutput(name).stderr}`.split('\n');
    const aws = (found: string[], name: string) => assert.deepEqual(found, ['hashicorp/aws'], name);
    table(
      (name) => providersInInitOutput(lines(name)),
      {
        'init-provider-not-installable': aws,
        'init-provider-not-installable-readonly-lockfile': aws,
        'init-provider-not-in-image-mirror': aws,
        'init-provider-in-image-mirror-readonly-lockfile-missing': aws,
      },
      (found, name) => assert.deepEqual(found, [], name),
    );
    assert.match(
      capturedOutput('init-provider-not-in-image-mirror-readonly-lockfile').stdout,
      /Reusing previous version of hashicorp\/aws from the dependency lock file/,
    );
  });
});

describe('a failed command as the error it is (failure)', () => {
  it('a lock held elsewhere is kind lock, naming the holder where the backend says who it is', () => {
    const local = failure(capturedRun('lock-local-held-plan'), 'PlanFailed');
    assert.ok(local instanceof TerraformFailed);
    assert.equal(local.kind, 'lock');
    assert.equal(local.reason, 'StateLocked');
    assert.equal(local.step, undefined, 'the step that ran the command names it (RunContext.step)');
    assert.match(
      local.message,
      new RegExp(
        `^terraform plan could not acquire the state lock: held by ${printed('lock-local-held-plan', 'Who')} \\(lock id ${printed('lock-local-held-plan', 'ID')}, since `,
      ),
    );
    assert.deepEqual(local.detail, { lock: detectLockError(stderrOf('lock-local-held-plan')) });
    const pg = failure(capturedRun('lock-pg-held-probe'), 'UnlockFailed');
    assert.equal(pg.kind, 'lock');
    assert.match(
      pg.message,
      /could not acquire the state lock: the backend does not say who holds it, and names no lock id/,
    );
    assert.doesNotMatch(pg.message, /--lock-id/, "pg's advisory locks have no id: no unlock to suggest");
    assert.match(
      local.message,
      new RegExp(`unlock it: captf-runner unlock --lock-id ${printed('lock-local-held-plan', 'ID')}\\.$`),
    );
  });

  it('any other failure quotes terraform: its last diagnostic, else its last line', () => {
    const stale = failure(capturedRun('apply-stale-plan'), 'ApplyFailed');
    assert.equal(stale.kind, 'terraform');
    assert.equal(stale.reason, 'ApplyFailed');
    assert.equal(stale.message, `terraform apply exited 1: ${lastDiagnostic(stderrOf('apply-stale-plan'))}`);
    assert.deepEqual(stale.detail, {
      exitCode: 1,
      diagnostics: [
        {
          severity: 'error',
          summary: 'Saved plan is stale',
          detail:
            'The given plan file can no longer be applied because the state was changed by another operation after the plan was created.',
        },
      ],
    });
    assert.equal(stale.diagnosis.problem.kind, 'stalePlan');
    const noState = failure(capturedRun('lock-local-probe-no-state'), 'UnlockFailed');
    assert.equal(noState.message, 'terraform state rm exited 1: to point the command to a specific state location.');
    assert.equal(noState.diagnosis.problem.kind, 'other');
    const push = failure(capturedRun('state-push-lower-serial'), 'StatePushFailed');
    assert.equal(
      push.message,
      'terraform state push exited 1: Failed to write state: cannot import state with serial 2 over newer state with serial 3',
    );
    assert.equal(push.reason, 'StatePushFailed');
  });

  it('every captured failure reads as one problem', () => {
    for (const name of cases) {
      const run = capturedRun(name);
      if (run.meaning !== 'error') continue;
      const { problem } = diagnose(run.stderrTail, { complete: true });
      const expected =
        name.startsWith('lock-') && name !== 'lock-local-probe-no-state'
          ? 'stateLocked'
          : name === 'apply-stale-plan'
            ? 'stalePlan'
            : name === 'init-provider-in-image-mirror-readonly-lockfile-missing'
              ? 'lockFile'
              : name.startsWith('init-provider-')
                ? 'providerNotInstallable'
                : 'other';
      assert.equal(problem.kind, expected, name);
    }
  });
});

describe('what a module prints is not terraform speaking', () => {
  it("a provisioner printing a stale-plan refusal and a lock report: neither is read as terraform's", () => {
    const name = 'apply-provisioner-prints-terraform-errors';
    const stderr = stderrOf(name);
    // The module's text is there, at the start of its lines, as terraform would print it ...
    assert.match(stderr, /^Error: Error acquiring the state lock$/m);
    assert.match(stderr, /^  ID:        forged-lock-id$/m);
    assert.match(stderr, /Error: Saved\s+plan is stale/);
    // ... after terraform's own error, which it cannot take out.
    assert.match(stderr, /^Error: local-exec provisioner error$/m);
    assert.equal(detectLockError(stderr), undefined);
    assert.equal(isStalePlan(stderr), false);
    const failed = failure(capturedRun(name), 'ApplyFailed');
    assert.equal(failed.kind, 'terraform');
    assert.equal(failed.reason, 'ApplyFailed');
    assert.equal(failed.diagnosis.problem.kind, 'other');
  });

  it('a stderr cut to its tail (its beginning lost) is never read as a refusal', () => {
    for (const name of ['apply-stale-plan', 'lock-local-held-plan']) {
      assert.notEqual(diagnose(stderrOf(name), { complete: true }).problem.kind, 'other', name);
      assert.equal(diagnose(stderrOf(name), { complete: false }).problem.kind, 'other', name);
    }
    // A hint is only a hint: init's still reads from a tail.
    assert.equal(
      diagnose(stderrOf('init-provider-not-in-image-mirror'), { complete: false }).problem.kind,
      'providerNotInstallable',
    );
  });
});

describe('exit codes (interpretExit) on what terraform really exited with', () => {
  it('plan -detailed-exitcode: 2 is changes, 0 none; every other command: 0 or an error', () => {
    const meanings = Object.fromEntries(cases.map((name) => [name, capturedRun(name).meaning]));
    assert.equal(meanings['plan-create'], 'changes');
    assert.equal(meanings['plan-variable-undeclared'], 'changes', 'a warning, and the plan goes on');
    assert.equal(meanings['plan-no-changes'], 'ok');
    assert.equal(meanings['plan-variable-missing'], 'error');
    for (const name of cases) {
      const { exitCode, argv } = capturedOutput(name);
      if (argv[0] !== 'plan') assert.equal(meanings[name], exitCode === 0 ? 'ok' : 'error', name);
    }
  });
});
