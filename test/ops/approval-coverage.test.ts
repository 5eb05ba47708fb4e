import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Masker } from '../../src/masking/mask.ts';
import {
  approvalCoverageStep,
  blockedRecordName,
  KEEP_BLOCKED_RECORDS,
  keepBlockedRecord,
  type DestructiveEntry,
} from '../../src/ops/approval-coverage.ts';
import type { RunContext } from '../../src/run/context.ts';
import type { Classification } from '../../src/schemas/classification.ts';
import { BLOCKED_LINEAGE, blockedResult } from '../kube/fake-cluster.support.ts';

/** What apply makes of an approval given for another state (it blocks again): here, an error that says why. */
const refuse = (why: string) => new Error(`refused: ${why}`);
const H = 'a'.repeat(64);
/** This run's inputs, which the state did not record before it: no approval of them was applied yet. */
const NOT_APPLIED = { inputsHash: 'c'.repeat(64), stateInputsHash: null };

describe('guard: the records of blocked runs and the approval step (approval-coverage)', () => {
  /** What keepBlockedRecord and approvalCoverageStep use of a RunContext, no process, no terraform. */
  function context(dir: string, extra: Record<string, unknown> = {}) {
    const warnings: string[] = [];
    const logged: string[] = [];
    const ctx = {
      settings: {
        out: join(dir, 'out'),
        backups: join(dir, 'backups'),
        kind: 'cluster',
        object: 'prod',
        namespace: 'captf-prod',
      },
      cluster: undefined,
      stopCause: undefined,
      masker: new Masker(),
      warn: (message: string) => void warnings.push(message),
      log: { warn: (_: unknown, message: string) => void logged.push(message), info: () => {} },
      step: <T>(_name: string, body: () => Promise<T>) => body(),
    };
    // Descriptors, not a spread: a getter stays a getter (throwing when read, not here).
    Object.defineProperties(ctx, Object.getOwnPropertyDescriptors(extra));
    return { ctx: ctx as unknown as RunContext, warnings, logged };
  }
  async function tempDir(t: { after: (fn: () => Promise<void>) => void }) {
    const dir = await mkdtemp(join(tmpdir(), 'captf-guard-test-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    return dir;
  }
  const hashOf = (i: number) => i.toString(16).padStart(64, '0');
  const entries = (n: number): (DestructiveEntry & { action: 'delete' })[] =>
    Array.from({ length: n }, (_, i) => ({ address: `terraform_data.r[${i}]`, action: 'delete' }));
  const planOf = (every: DestructiveEntry[], destructiveTotal = every.length) =>
    ({
      destructive: every.slice(0, 100).map((d) => ({ ...d, actions: ['delete'] })),
      destructiveTotal,
      actions: [],
      actionsTotal: 0,
    }) as unknown as Classification;

  it(`keeps the newest ${KEEP_BLOCKED_RECORDS} records (one per approval hash), the one just written among them, and nothing else is touched`, async (t) => {
    const dir = await tempDir(t);
    const { ctx } = context(dir);
    const backups = join(dir, 'backups');
    await mkdir(backups, { recursive: true });
    // 12 older records, oldest first by mtime; and files that are not records.
    const base = Date.parse('2025-01-01T00:00:00Z') / 1000;
    for (let i = 1; i <= 12; i += 1) {
      const path = join(backups, blockedRecordName(hashOf(i)));
      await writeFile(path, '{}');
      await utimes(path, base + i, base + i);
    }
    await writeFile(join(backups, 'blocked-not-a-hash.json'), '{}');
    await writeFile(join(backups, 'state-backup.json'), '{}');
    // The one written now is older by mtime than none of them, and kept whatever its name sorts as.
    const hash = hashOf(0);
    const written = await keepBlockedRecord(ctx, blockedResult({ approvalHash: hash }));
    assert.equal(written, join(backups, blockedRecordName(hash)));
    assert.equal(JSON.parse(await readFile(written!, 'utf8')).approvalHash, hash);
    const left = (await readdir(backups)).sort();
    const records = left.filter((name) => /^blocked-[0-9a-f]{64}\.json$/.test(name));
    assert.equal(records.length, KEEP_BLOCKED_RECORDS);
    assert.deepEqual(
      records,
      [hash, ...[4, 5, 6, 7, 8, 9, 10, 11, 12].map(hashOf)].map(blockedRecordName).sort(),
      'the oldest ones went',
    );
    assert.ok(left.includes('blocked-not-a-hash.json') && left.includes('state-backup.json'));
  });

  it('a record written again for the same hash replaces it; without an approval hash or in a cluster nothing is written', async (t) => {
    const dir = await tempDir(t);
    const { ctx } = context(dir);
    await keepBlockedRecord(ctx, blockedResult({ approvalHash: hashOf(1), finishedAt: '2025-01-01T00:00:01Z' }));
    await keepBlockedRecord(ctx, blockedResult({ approvalHash: hashOf(1), finishedAt: '2025-01-01T00:00:02Z' }));
    assert.deepEqual(await readdir(join(dir, 'backups')), [blockedRecordName(hashOf(1))]);
    assert.equal(
      JSON.parse(await readFile(join(dir, 'backups', blockedRecordName(hashOf(1))), 'utf8')).finishedAt,
      '2025-01-01T00:00:02Z',
    );
    assert.equal(await keepBlockedRecord(ctx, blockedResult({ approvalHash: undefined })), undefined);
    const inCluster = context(dir, { settings: { out: join(dir, 'c-out'), kind: 'cluster' }, cluster: {} }).ctx;
    assert.equal(await keepBlockedRecord(inCluster, blockedResult()), undefined);
    assert.ok(!existsSync(join(dir, 'c-out')));
  });

  it('compares every destructive entry (past the 100 listed) with the record, and logs each unreviewed one', async (t) => {
    const dir = await tempDir(t);
    const { ctx, warnings, logged } = context(dir);
    const every = entries(130);
    const shown = every.slice(0, 100).map((d) => ({ ...d, actions: ['delete'] }));
    const record = blockedResult({
      approvalHash: H,
      plan: { ...blockedResult().plan!, destructive: shown, destructiveTotal: 130 },
    });
    await keepBlockedRecord(ctx, record);
    const coverage = await approvalCoverageStep(ctx, {
      plan: planOf(every),
      everyDestructive: every,
      approvalHash: H,
      stateLineage: BLOCKED_LINEAGE,
      ...NOT_APPLIED,
      refuseOtherState: refuse,
    });
    assert.equal(coverage.unreviewedTotal, 30);
    assert.deepEqual(coverage.unreviewed, every.slice(100));
    assert.deepEqual(coverage.blockedRun, {
      location: join(dir, 'backups', blockedRecordName(H)),
      finishedAt: record.finishedAt,
    });
    assert.equal(warnings.length, 1);
    assert.deepEqual(logged.filter((m) => m.startsWith('approved without review: ')).length, 30);
  });

  it('a record that says it finished in the future is passed over, with a warning', async (t) => {
    const dir = await tempDir(t);
    const { ctx, warnings } = context(dir);
    const every = entries(2);
    // The real record (everything shown) in the backups dir; a forged one, claiming the far future, as <out>/result.json.
    await keepBlockedRecord(
      ctx,
      blockedResult({
        approvalHash: H,
        plan: {
          ...blockedResult().plan!,
          destructive: every.map((d) => ({ ...d, actions: ['delete'] })),
          destructiveTotal: 2,
        },
      }),
    );
    await mkdir(join(dir, 'out'));
    await writeFile(
      join(dir, 'out', 'result.json'),
      JSON.stringify(blockedResult({ approvalHash: H, finishedAt: '2999-01-01T00:00:00Z' })),
    );
    const coverage = await approvalCoverageStep(ctx, {
      plan: planOf(every),
      everyDestructive: every,
      approvalHash: H,
      stateLineage: BLOCKED_LINEAGE,
      ...NOT_APPLIED,
      refuseOtherState: refuse,
    });
    assert.equal(coverage.unreviewedTotal, 0);
    assert.equal(coverage.blockedRun?.location, join(dir, 'backups', blockedRecordName(H)));
    assert.equal(warnings.length, 1, JSON.stringify(warnings));
    assert.match(
      warnings[0]!,
      /passed over .*result\.json \(ignored: it says it finished at 2999-01-01T00:00:00Z, in the future\)/,
    );
  });

  it('fails closed: when the comparison fails (with --expect-lineage), every destructive entry counts as unreviewed, with a warning', async (t) => {
    const dir = await tempDir(t);
    const every = entries(130);
    // Something unexpected while looking for the blocked run.
    const broken = context(dir, {
      get cluster(): never {
        throw new Error('boom');
      },
    });
    Object.assign(broken.ctx.settings, { expectLineage: BLOCKED_LINEAGE });
    const coverage = await approvalCoverageStep(broken.ctx, {
      plan: planOf(every),
      everyDestructive: every,
      approvalHash: H,
      stateLineage: BLOCKED_LINEAGE,
      ...NOT_APPLIED,
      refuseOtherState: refuse,
    });
    assert.equal(coverage.unreviewedTotal, 130);
    assert.deepEqual(coverage.unreviewed, every.slice(0, 100));
    assert.equal(coverage.blockedRun, undefined);
    assert.equal(broken.warnings.length, 1);
    assert.match(
      broken.warnings[0]!,
      /could not compare the approval .* \(boom\): all 130 destructive changes of this plan count as unreviewed/,
    );
    assert.equal(broken.logged.filter((m) => m.startsWith('approved without review: ')).length, 130);
    // Fewer entries named than the plan counts: the ones nobody named count too.
    const short = context(dir);
    Object.assign(short.ctx.settings, { expectLineage: BLOCKED_LINEAGE });
    const partial = await approvalCoverageStep(short.ctx, {
      plan: planOf(every.slice(0, 120), 130),
      everyDestructive: every.slice(0, 120),
      approvalHash: H,
      stateLineage: BLOCKED_LINEAGE,
      ...NOT_APPLIED,
      refuseOtherState: refuse,
    });
    assert.equal(partial.unreviewedTotal, 130);
    assert.match(
      short.warnings[0]!,
      /120 destructive entries, actions and policy findings were named, but the plan has 130, 0 and 0/,
    );
  });

  it('covers only the state its blocked run planned against: another lineage, no state, or a record that does not say is otherState, naming both', async (t) => {
    const dir = await tempDir(t);
    const { ctx } = context(dir);
    const every = entries(1);
    const shown = blockedResult({
      approvalHash: H,
      plan: {
        ...blockedResult().plan!,
        destructive: every.map((d) => ({ ...d, actions: ['delete'] })),
        destructiveTotal: 1,
      },
    });
    await keepBlockedRecord(ctx, shown);
    const same = await approvalCoverageStep(ctx, {
      plan: planOf(every),
      everyDestructive: every,
      approvalHash: H,
      stateLineage: BLOCKED_LINEAGE,
      ...NOT_APPLIED,
      refuseOtherState: refuse,
    });
    assert.equal(same.unreviewedTotal, 0);
    // Another state: the step fails with what the caller makes of the reason (apply: blocked again), nothing covered.
    await assert.rejects(
      approvalCoverageStep(ctx, {
        plan: planOf(every),
        everyDestructive: every,
        approvalHash: H,
        stateLineage: 'another-lineage',
        ...NOT_APPLIED,
        refuseOtherState: refuse,
      }),
      new RegExp(
        `refused: .*made against the state of lineage ${BLOCKED_LINEAGE}, but the backend now holds a state of lineage another-lineage: an approval covers the state its blocked run planned against`,
      ),
    );
    await assert.rejects(
      approvalCoverageStep(ctx, {
        plan: planOf(every),
        everyDestructive: every,
        approvalHash: H,
        stateLineage: null,
        ...NOT_APPLIED,
        refuseOtherState: refuse,
      }),
      /refused: .*but the backend now holds no state/,
    );
    const { state: _state, ...unsaid } = shown;
    await keepBlockedRecord(ctx, unsaid);
    await assert.rejects(
      approvalCoverageStep(ctx, {
        plan: planOf(every),
        everyDestructive: every,
        approvalHash: H,
        stateLineage: BLOCKED_LINEAGE,
        ...NOT_APPLIED,
        refuseOtherState: refuse,
      }),
      /refused: .*made against a state it does not name/,
    );
  });

  it('no blocked run found, or none could be looked for, and no --expect-lineage: the approval covers nothing (otherState), saying why', async (t) => {
    const dir = await tempDir(t);
    const every = entries(1);
    const options = {
      plan: planOf(every),
      everyDestructive: every,
      approvalHash: H,
      stateLineage: BLOCKED_LINEAGE,
      ...NOT_APPLIED,
      refuseOtherState: refuse,
    };
    const { ctx } = context(dir);
    await assert.rejects(
      approvalCoverageStep(ctx, options),
      new RegExp(
        `refused: no blocked run was found for approval hash ${H} \\(looked in: .*${blockedRecordName(H)}.*\\), and no --expect-lineage names the state: nothing records which state the approval was given for, so it covers nothing destructive and this plan is blocked again`,
      ),
    );
    const broken = context(dir, {
      get cluster(): never {
        throw new Error('boom');
      },
    });
    await assert.rejects(
      approvalCoverageStep(broken.ctx, options),
      /refused: no blocked run was found for approval hash a{64} \(the look-up failed: boom\), and no --expect-lineage names the state/,
    );
    // With --expect-lineage the state was checked against it before the plan: applied, every entry unreviewed.
    const named = context(dir);
    Object.assign(named.ctx.settings, { expectLineage: BLOCKED_LINEAGE });
    const coverage = await approvalCoverageStep(named.ctx, options);
    assert.equal(coverage.unreviewedTotal, 1);
    assert.match(named.warnings[0]!, /^no blocked run was found for approval hash a{64}/);
  });

  it('a stop request is not swallowed', async (t) => {
    const dir = await tempDir(t);
    const { ctx } = context(dir, {
      stopCause: 'SIGTERM',
      get cluster(): never {
        throw new Error('boom');
      },
    });
    await assert.rejects(
      approvalCoverageStep(ctx, {
        plan: planOf(entries(1)),
        everyDestructive: entries(1),
        approvalHash: H,
        stateLineage: BLOCKED_LINEAGE,
        ...NOT_APPLIED,
        refuseOtherState: refuse,
      }),
      /boom/,
    );
  });
});
