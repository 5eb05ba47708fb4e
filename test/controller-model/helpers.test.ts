// The pure helpers under DecideOp: jitter, backoff, the health-pending delay and what each op runs.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { backoffSeconds, countsAsFailure, failureStreak } from '../../src/controller-model/backoff.ts';
import { imageFor, inputsFor } from '../../src/controller-model/op-shape.ts';
import { healthPendingDelaySeconds } from '../../src/controller-model/schedule.ts';
import { jitterSeconds, jitterWord } from '../../src/controller-model/jitter.ts';
import type { FinishedJob } from '../../src/controller-model/snapshot.ts';

describe('jitter — “a deterministic jitter of up to a tenth of the interval, derived from the object’s UID”', () => {
  test('matches values computed independently with sha256sum', () => {
    // printf %s UID | sha256sum: the first 8 hex digits are the word.
    assert.equal(jitterWord('3f0b8a52-6c1e-4d7a-9b2f-0e5c7d9a1b34'), 0xcb4a88e9);
    assert.equal(jitterSeconds('3f0b8a52-6c1e-4d7a-9b2f-0e5c7d9a1b34', 3600), 285);
    assert.equal(jitterSeconds('3f0b8a52-6c1e-4d7a-9b2f-0e5c7d9a1b34', 600), 47);
    assert.equal(jitterSeconds('7c2e5b19-8d4a-4f6e-a3b1-9e0d2c4f6a87', 3600), 26);
  });

  test('stays below a tenth of the interval and differs between objects', () => {
    const uids = Array.from({ length: 200 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
    for (const uid of uids) {
      const jitter = jitterSeconds(uid, 86_400);
      assert.ok(jitter >= 0 && jitter < 8_640, `${uid}: ${jitter}`);
    }
    assert.ok(
      new Set(uids.map((uid) => jitterSeconds(uid, 86_400))).size > 190,
      'moved objects must not check in lockstep',
    );
  });
});

describe('backoff — “one minute after the first failure, doubling to a ten-minute cap”', () => {
  test('1, 2, 4, 8 minutes, then the cap', () => {
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6].map((n) => backoffSeconds(n, 0, 100)),
      [60, 120, 240, 480, 600, 600],
    );
  });
  test('no failure, no wait', () => assert.equal(backoffSeconds(0, 5, 3), 0));
  test('“the cap from the point the object’s retained failed Jobs reach failedJobsHistoryLimit”', () => {
    assert.equal(backoffSeconds(1, 2, 3), 60);
    assert.equal(backoffSeconds(1, 3, 3), 600);
  });
  test('“counted as at least 1”', () => assert.equal(backoffSeconds(1, 1, 0), 600));

  const job = (outcome: FinishedJob['outcome'], minute: number, op: FinishedJob['op'] = 'apply'): FinishedJob => ({
    op,
    outcome,
    finishedAt: `2025-06-01T11:${String(minute).padStart(2, '0')}:00Z`,
  });
  test('“A blocked Job counts toward neither the retry backoff”; a Job stopped from outside neither', () => {
    assert.equal(countsAsFailure(job('blocked', 1)), false);
    assert.equal(countsAsFailure(job('interrupted', 1)), false);
    const streak = failureStreak(
      [job('failed', 1), job('blocked', 2), job('interrupted', 3), job('failed', 4)],
      'apply',
    );
    assert.deepEqual(
      streak.map((j) => j.finishedAt),
      ['2025-06-01T11:04:00Z', '2025-06-01T11:01:00Z'],
    );
  });
  test('“A destroy that the deadline killed counts as a failure”', () => {
    assert.equal(countsAsFailure(job('deadlineExceeded', 1, 'destroy')), true);
  });
  test('a success ends the streak; other ops do not join it; order of the list does not matter', () => {
    const jobs = [job('failed', 9), job('succeeded', 5), job('failed', 2), job('failed', 7, 'drift')];
    assert.deepEqual(
      failureStreak(jobs, 'apply').map((j) => j.finishedAt),
      ['2025-06-01T11:09:00Z'],
    );
  });
});

describe('health pending — “refresh after 30 s, doubling to 5 min”', () => {
  test('30, 60, 120, 240 s, then 5 min', () => {
    assert.deepEqual([1, 2, 3, 4, 5, 9].map(healthPendingDelaySeconds), [30, 60, 120, 240, 300, 300]);
  });
});

describe('what each op reads — “What each op reads and writes”', () => {
  test('inputs per op and kind', () => {
    assert.equal(inputsFor('apply', 'machine'), 'current');
    assert.equal(inputsFor('plan', 'cluster'), 'current');
    assert.equal(inputsFor('refresh', 'pool'), 'current');
    assert.equal(inputsFor('drift', 'machine'), 'durable');
    assert.equal(inputsFor('destroy', 'cluster'), 'durable');
    assert.equal(inputsFor('restore', 'pool'), 'none');
  });
  test('“Only apply and plan run the spec’s image as written”', () => {
    assert.deepEqual(imageFor('apply', 'sha256:1'), { image: 'spec' });
    assert.deepEqual(imageFor('plan', undefined), { image: 'spec' });
    assert.deepEqual(imageFor('restore', 'sha256:1'), { image: 'pinned' });
    assert.deepEqual(imageFor('drift', undefined), { image: 'spec', events: ['DigestUnknown'] });
  });
});
