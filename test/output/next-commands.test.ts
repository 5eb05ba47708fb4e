// The commands the summaries suggest: built from the run's command line, with the flags the next op
// takes only, a credential never repeated, every word quoted for a shell.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyPlanArtifact, nextCommand, remediationApply, rerunWithApproval } from '../../src/output/next-commands.ts';

const H = 'a'.repeat(64);

describe('the commands the summaries suggest', () => {
  it('replaces a given approval, in either spelling, and quotes what a shell would split', () => {
    assert.equal(
      rerunWithApproval(['apply', `--approved-hash=${'c'.repeat(64)}`, '--guard', 'on'], H),
      `captf-runner apply --guard on --approved-hash ${H}`,
    );
    assert.equal(
      rerunWithApproval(['apply', '--module', "it's here"], H),
      `captf-runner apply --module 'it'\\''s here' --approved-hash ${H}`,
    );
  });

  it('keeps only the flags the next op takes: drift --detailed-exitcode and plan --artifacts never reach an apply', () => {
    assert.equal(
      remediationApply(['drift', '--module', 'm', '--detailed-exitcode', '--summary-md=s.md', '--no-color']),
      'captf-runner apply --module m --summary-md=s.md --no-color',
    );
    assert.equal(
      applyPlanArtifact(['plan', '--artifacts', 'a', '--out', 'o'], 'a/plan-1', H),
      `captf-runner apply --out o --plan-artifact a/plan-1 --approved-plan-hash ${H}`,
    );
    assert.equal(nextCommand(['apply', '--approved-hash', H, '--guard', 'off'], 'plan', [], []), 'captf-runner plan');
  });

  it('repeats a --backend-config file, never a KEY=VALUE (it may be a credential)', () => {
    const argv = [
      'apply',
      '--backend-config',
      'backend.hcl',
      '--backend-config',
      'password=hunter22',
      '--backend-config=token=x',
      '--backend-config=/etc/b.hcl',
    ];
    const command = rerunWithApproval(argv, H);
    assert.equal(
      command,
      `captf-runner apply --backend-config backend.hcl --backend-config '<as before>' '--backend-config=<as before>' --backend-config=/etc/b.hcl --approved-hash ${H}`,
    );
    assert.doesNotMatch(command, /hunter22|token=x/);
  });
});
