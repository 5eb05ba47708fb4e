import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Masker, MASK, maskValue } from '../../src/masking/mask.ts';
import { compactResult } from '../../src/output/termination.ts';
import { humanSummary } from '../../src/output/summary.ts';
import type { Result } from '../../src/schemas/result.ts';
import { classifyPlan } from '../../src/plan/classify.ts';
import { blockedResultOf, manyDeletes, resultOf } from './results.support.ts';

describe('output: masking by value', () => {
  it('masks raw, JSON-escaped and per-line forms, and reports values too short to mask', () => {
    const m = new Masker();
    m.add('s3cr"et\nline-two', 'token');
    m.add('ab', 'pin');
    assert.equal(m.mask('x s3cr"et\nline-two y'), `x ${MASK} y`);
    assert.equal(m.mask('{"v":"s3cr\\"et\\nline-two"}'), `{"v":"${MASK}"}`);
    assert.equal(m.mask('line-two alone'), `${MASK} alone`);
    assert.equal(m.mask('ab stays'), 'ab stays');
    assert.deepEqual(m.tooShort, ['pin']);
  });

  it('maskValue leaves hashes whole, even when a short hex secret is inside one, but masks a secret that is 64 hex digits', () => {
    const hash = 'a'.repeat(32) + 'beef' + 'c'.repeat(28);
    const hexToken = '0123456789abcdef'.repeat(4);
    const m = new Masker();
    m.add('beef', 'short hex secret');
    m.add(hexToken, 'api token');
    const masked = maskValue(m, { inputsHash: hash, outputs: { token: hexToken, text: `Bearer ${hexToken}` } });
    assert.deepEqual(masked, { inputsHash: hash, outputs: { token: MASK, text: `Bearer ${MASK}` } });
  });
});

describe('output: the termination message', () => {
  const base = (destructiveCount: number, message: string): Result =>
    blockedResultOf(manyDeletes(destructiveCount), { message });

  it('is always valid JSON of at most 4096 bytes, counting what it left out', () => {
    for (const [count, length] of [
      [0, 10],
      [3, 100],
      [500, 50_000],
    ] as const) {
      const text = compactResult(base(count, 'm'.repeat(length)), new Masker());
      assert.ok(Buffer.byteLength(text) <= 4096, `${Buffer.byteLength(text)} bytes`);
      const parsed = JSON.parse(text);
      assert.equal(parsed.outcome, 'blocked');
      assert.equal(parsed.destructive.length + parsed.destructiveOmitted, count);
    }
  });

  it('masks secrets', () => {
    const m = new Masker();
    m.add('hunter2-secret', 'x');
    assert.ok(!compactResult(base(0, 'token hunter2-secret leaked'), m).includes('hunter2-secret'));
  });

  it('masks before it cuts: a secret across the cut leaves no part of itself', () => {
    const secret = 'S3cretPassw0rd-that-is-long';
    const m = new Masker();
    m.add(secret, 'password');
    const cutInside = {
      ...base(0, `${'m'.repeat(1990)}${secret}`),
      warnings: [`${'w'.repeat(290)}postgres://captf:${secret}@db`],
    };
    const text = compactResult(cutInside, m);
    for (const part of ['S3cret', 'S3cretP', 'Passw0rd'])
      assert.ok(!text.includes(part), `"${part}" of the secret is in ${text.slice(-400)}`);
  });

  it('keeps the last three warnings, each cut to 300 characters', () => {
    const warned = { ...base(0, 'm'), warnings: ['first', 'second', 'third', `fourth ${'w'.repeat(1000)}`] };
    const parsed = JSON.parse(compactResult(warned, new Masker()));
    assert.deepEqual(parsed.warnings.slice(0, 2), ['second', 'third']);
    assert.equal(parsed.warnings[2].length, 300);
  });

  it('when even the smallest form is too large, the outcome alone: still valid JSON within the limit', () => {
    const huge = { ...base(0, 'm'), annotations: { 'captf.io/outcome': 'blocked', 'captf.io/note': 'n'.repeat(5000) } };
    const text = compactResult(huge, new Masker());
    assert.ok(Buffer.byteLength(text) <= 4096);
    assert.deepEqual(JSON.parse(text), {
      apiVersion: 'runner.captf.io/v1',
      op: 'apply',
      outcome: 'blocked',
      reason: 'DestructivePlanBlocked',
      exitCode: 3,
    });
  });
});

describe('output: masking what terraform escapes', () => {
  it('masks the \\u003c form terraform writes in JSON', () => {
    const m = new Masker();
    m.add('a<b>&c-secret', 'x');
    assert.equal(m.mask('"a\\u003cb\\u003e\\u0026c-secret"'), `"${MASK}"`);
  });
});

describe('output: what an approval covered unseen (approval.unreviewed)', () => {
  const H = 'a'.repeat(64);
  const approved = (approval: Result['approval']): Result =>
    resultOf({ message: 'Applied.', approvalHash: H, approval, applied: true, mayHaveChanged: true });

  it('the summary lists the unreviewed entries and what they were compared with', () => {
    const text = humanSummary(
      approved({
        given: true,
        matched: true,
        required: true,
        unreviewed: [
          { address: 'terraform_data.node["b"]', action: 'delete' },
          { address: 'terraform_data.x', deposed: '0001', action: 'delete' },
        ],
        unreviewedTotal: 3,
        blockedRun: { location: '/b/blocked.json', finishedAt: '2025-01-01T00:00:00Z' },
      }),
    );
    assert.match(
      text,
      /approved without review \(3: the approval covered them, the blocked run of 2025-01-01T00:00:00Z did not show\):\n  terraform_data\.node\["b"\] \(delete\)\n  terraform_data\.x \(deposed 0001\) \(delete\)\n  … and 1 more \(see "approved without review" in the log\)/,
    );
    assert.match(
      humanSummary(
        approved({
          given: true,
          matched: true,
          required: true,
          unreviewed: [{ address: 'a.b', action: 'replace' }],
          unreviewedTotal: 1,
        }),
      ),
      /no blocked run was found/,
    );
  });

  it('nothing unreviewed, or no approval needed: no such line', () => {
    assert.doesNotMatch(
      humanSummary(approved({ given: true, matched: true, required: true, unreviewed: [], unreviewedTotal: 0 })),
      /without review/,
    );
    assert.doesNotMatch(humanSummary(approved({ given: false, matched: false, required: false })), /without review/);
  });

  it('the termination message carries unreviewedTotal', () => {
    const parsed = JSON.parse(
      compactResult(
        approved({ given: true, matched: true, required: true, unreviewed: [], unreviewedTotal: 7 }),
        new Masker(),
      ),
    );
    assert.equal(parsed.unreviewedTotal, 7);
    assert.equal(
      JSON.parse(compactResult(approved({ given: false, matched: false, required: false }), new Masker()))
        .unreviewedTotal,
      undefined,
    );
  });
});

describe('output: provider actions', () => {
  const withActions = (count: number, op: Result['op'] = 'apply'): Result => {
    const action_invocations = Array.from({ length: count }, (_, i) => ({
      address: `action.aws_lambda_invoke.a${i}`,
      type: 'aws_lambda_invoke',
      config_values: { token: 'S3CRET' },
      lifecycle_action_trigger: {
        triggering_resource_address: 'terraform_data.cluster',
        action_trigger_event: 'BeforeDestroy',
        on_failure: 'ActionOnFailureTaint',
      },
    }));
    const plan = classifyPlan({
      format_version: '1.2',
      applyable: true,
      complete: true,
      errored: false,
      resource_changes: [],
      action_invocations,
    });
    return blockedResultOf(plan, { op });
  };

  it('the termination message carries actionsTotal and the first actions {address, trigger}, within the limit', () => {
    const parsed = JSON.parse(compactResult(withActions(12), new Masker()));
    assert.equal(parsed.actionsTotal, 12);
    assert.deepEqual(parsed.actions.slice(0, 2), [
      { address: 'action.aws_lambda_invoke.a0', trigger: 'BeforeDestroy' },
      { address: 'action.aws_lambda_invoke.a1', trigger: 'BeforeDestroy' },
    ]);
    assert.ok(parsed.actions.length <= 5);
    const long = {
      ...withActions(100),
      message: 'm'.repeat(3000),
      warnings: ['w'.repeat(1000), 'w'.repeat(1000), 'w'.repeat(1000)],
    };
    const text = compactResult(long, new Masker());
    assert.ok(Buffer.byteLength(text) <= 4096);
    assert.equal(JSON.parse(text).actionsTotal, 100);
    assert.equal(JSON.parse(compactResult(withActions(0), new Masker())).actions, undefined, 'no actions: no list');
  });

  it('the summary names every listed action with its trigger, resource and failure mode, and says the plan needs an approval', () => {
    const summary = humanSummary(withActions(2));
    assert.match(
      summary,
      /provider actions \(2: the runner cannot know what they do\):\n  action\.aws_lambda_invoke\.a0 \(action BeforeDestroy\) on terraform_data\.cluster, on failure taint\n/,
    );
    assert.match(summary, /applying this plan needs an approval/);
    assert.ok(!summary.includes('S3CRET'));
    assert.doesNotMatch(humanSummary(withActions(2, 'destroy')), /needs an approval/, 'a destroy is never gated');
  });
});
