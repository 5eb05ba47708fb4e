// A result masked for a sink: the words its schema lists stay, whatever a secret equals.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MASK, Masker } from '../../src/masking/mask.ts';
import { maskResult, PROTOCOL_WORD_WARNING } from '../../src/masking/mask-result.ts';
import { classifyPlan } from '../../src/plan/classify.ts';
import { Result } from '../../src/schemas/result.ts';
import { blockedResultOf } from '../output/results.support.ts';

describe('maskResult: the words its schema lists', () => {
  it('a destructive action, an outcome: a secret "delete" leaves result.json valid, and is masked everywhere else', () => {
    const plan = classifyPlan({
      format_version: '1.2',
      applyable: true,
      complete: true,
      errored: false,
      resource_changes: [
        {
          address: 'terraform_data.delete',
          mode: 'managed',
          type: 'terraform_data',
          name: 'delete',
          change: { actions: ['delete'] },
        },
      ],
    });
    const result = Result.parse(
      blockedResultOf(plan, {
        message: 'delete terraform_data.delete?',
        steps: [{ name: 'plan', status: 'ok', startedAt: '2025-01-01T00:00:00.000Z', durationMs: 1 }],
        startedAt: '2025-01-01T00:00:00.000Z',
        finishedAt: '2025-01-01T00:00:00.000Z',
      }),
    );
    const masker = new Masker();
    for (const secret of ['delete', 'blocked']) masker.add(secret, 'a value in sensitive.tfvars.json');
    const masked = Result.parse(maskResult(masker, result));
    assert.equal(masked.plan!.destructive[0]!.action, 'delete');
    assert.equal(masked.plan!.destructive[0]!.address, `terraform_data.${MASK}`);
    assert.equal(masked.outcome, 'blocked');
    assert.equal(masked.message, `${MASK} terraform_data.${MASK}?`);
    assert.deepEqual(masked.warnings, [PROTOCOL_WORD_WARNING]);
  });
});
