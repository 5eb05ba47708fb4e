// A killed apply is not forgotten (issue 39, 4): terraform saves the state only every 20 s during an
// apply, so a run killed mid-apply leaves objects outside the state. The runner writes a marker to the
// object's backup store before terraform apply starts and deletes it however the apply ends; the next
// run that finds one reports what may exist outside the state, once.
import { after, describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileLines, startInBackground, until } from '../support/exec.ts';
import { countedSlowApply, modules, testTerraformEnv } from '../support/tf-modules.ts';
import { argsFor, explain, RUNNER, runRunner, scenario, summaryLines } from '../support/runner.ts';
import { Result, TerminationMessage } from '../../src/schemas/result.ts';

/** Every process group a test started, killed if it still runs when the file ends. */
const groups: number[] = [];
after(() => {
  for (const pgid of groups)
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // gone
    }
});

/** The direct children of `pid` (from /proc): terraform, which leads its own process group. */
function childrenOf(pid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // pid (comm) state ppid …: comm may hold spaces, so read after its closing parenthesis.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** The apply markers in a directory store. */
const markers = (backups: string) =>
  existsSync(backups) ? readdirSync(backups).filter((name) => name.startsWith('applying-')) : [];

const slowAddresses = ['terraform_data.slow[0]', 'terraform_data.slow[1]', 'terraform_data.slow[2]'];

/**
 * A machine applied once, then an apply of three slow objects started in the background (a process
 * group of its own) and inside terraform apply: its three provisioners run, and wait while `slow` exists.
 */
async function slowApplyRunning(t: TestContext, extraArgs: string[] = []) {
  const s = await scenario(t, modules.base);
  const runs = join(s.dir, 'provisioner-runs');
  const slow = join(s.dir, 'slow');
  const first = await s.run('apply', ['--kind', 'machine', '--guard', 'off']);
  assert.equal(first.exitCode, 0, explain(first));
  writeFileSync(slow, '');
  // Waits while `slow` exists (at most 120 s), polled: a test that removes it lets the apply end at once.
  const waitWhileSlow = `n=0; while [ -e ${slow} ] && [ $n -lt 1200 ]; do sleep 0.1; n=$((n+1)); done`;
  await s.useModule(countedSlowApply(runs, { resources: 3, then: waitWhileSlow }));
  const { child, exited } = await startInBackground(
    process.execPath,
    [RUNNER, ...s.runArgs('apply', ['--kind', 'machine', '--guard', 'off', ...extraArgs])],
    { env: testTerraformEnv(), mark: '"msg":"apply: started"', killAfterMs: 180_000 },
  );
  groups.push(child.pid!);
  await until('the three provisioners started', () => fileLines(runs).length === 3);
  return { s, runs, slow, backups: join(s.out, 'backups'), child, exited };
}

describe('a killed apply', () => {
  it('SIGKILL of the whole pod mid-apply: the next run reports what may exist outside the state, once', async (t) => {
    const { s, runs, slow, backups, child, exited } = await slowApplyRunning(t);
    assert.equal(markers(backups).length, 1, 'the marker is written before terraform apply starts');
    // A lost node: the runner and terraform (its own process group, with the provisioners) die at once.
    const terraform = childrenOf(child.pid!);
    assert.ok(terraform.length > 0, 'terraform runs under the runner');
    groups.push(...terraform);
    for (const pgid of [child.pid!, ...terraform]) process.kill(-pgid, 'SIGKILL');
    await exited;
    const [left] = markers(backups);
    assert.ok(left, 'the killed run left its marker');

    await rm(slow);
    const summaryMd = join(s.dir, 'summary.md');
    const next = await s.run('apply', ['--kind', 'machine', '--guard', 'off', '--summary-md', summaryMd]);
    assert.equal(next.exitCode, 0, explain(next));
    const r = next.result!;
    assert.deepEqual(r.killedApply?.addresses.slice().sort(), slowAddresses, JSON.stringify(r.killedApply));
    assert.equal(r.killedApply?.addressesLeftOut, 0);
    assert.equal(r.killedApply?.op, 'apply');
    assert.match(r.killedApply!.planHash, /^[0-9a-f]{64}$/);
    assert.equal(r.killedApply!.marker, `${backups}/${left}`, 'the marker named');
    const notice = r.notices?.find((n) => n.code === 'KilledApplyFound');
    assert.ok(notice, JSON.stringify(r.notices));
    for (const address of slowAddresses) assert.ok(notice.message.includes(address), notice.message);
    assert.match(notice.message, /may exist outside the state/);
    assert.match(
      notice.message,
      /its process on this machine is gone/,
      'no --deadline: its gone process is what tells',
    );
    assert.ok(
      summaryLines(next).some((line) => line.includes('KilledApplyFound') || line.includes('never finished')),
      summaryLines(next).join('\n'),
    );
    const md = readFileSync(summaryMd, 'utf8');
    assert.ok(md.includes('killed apply') && md.includes('terraform_data.slow[0]'), md);
    const termination = TerminationMessage.parse(JSON.parse(readFileSync(s.termination, 'utf8')));
    assert.deepEqual(termination.killedApply?.addresses.slice().sort(), slowAddresses, JSON.stringify(termination));
    assert.deepEqual(markers(backups), [], 'reported once: the marker is deleted, and the apply left none');
    // The state never held them: the next apply created them again (the report is what makes that visible).
    assert.equal(fileLines(runs).length, 6);

    const third = await s.run('plan');
    assert.equal(third.exitCode, 0, explain(third));
    assert.equal(third.result!.killedApply, undefined);
    assert.ok(!third.result!.notices?.some((n) => n.code === 'KilledApplyFound'));
  });

  it('terraform alone killed (an OOM kill): the runner keeps the marker, and the next run reports it', async (t) => {
    const { s, slow, backups, child, exited } = await slowApplyRunning(t);
    const terraform = childrenOf(child.pid!);
    assert.ok(terraform.length > 0, 'terraform runs under the runner');
    groups.push(...terraform);
    for (const pgid of terraform) process.kill(-pgid, 'SIGKILL');
    const killed = await exited;
    assert.equal(killed.exitCode, 1, killed.stderr.slice(-3000));
    const failed = Result.parse(JSON.parse(readFileSync(join(s.out, 'result.json'), 'utf8')));
    assert.equal(failed.reason, 'ApplyFailed');
    assert.ok(
      failed.warnings.some((w) => w.includes('the apply marker') && w.includes('stays')),
      failed.warnings.join('\n'),
    );
    assert.equal(markers(backups).length, 1, 'the marker stays');

    await rm(slow);
    const next = await s.run('plan');
    assert.equal(next.exitCode, 0, explain(next));
    assert.deepEqual(next.result!.killedApply?.addresses.slice().sort(), slowAddresses);
    assert.deepEqual(markers(backups), []);
  });

  // A second Job of the object (its own out dir, the same backup store and state) while the first one's apply
  // runs: with a --deadline not yet passed, and without one while its process still runs.
  for (const { name, flags, says } of [
    { name: 'before its --deadline', flags: ['--deadline', '10m'], says: /may still be running/ },
    { name: 'started without --deadline: its process still runs', flags: [], says: /ran without --deadline/ },
  ]) {
    it(`a run overlapping a live apply (${name}) names its marker and leaves it`, async (t) => {
      const { s, slow, backups, exited } = await slowApplyRunning(t, flags);
      const [live] = markers(backups);
      assert.ok(live, 'the live apply wrote its marker');

      const other = { ...s, out: join(s.dir, 'out-2'), termination: join(s.dir, 'termination-2') };
      const overlapping = await runRunner(
        argsFor(other, 'plan', ['--state', s.state], ['--kind', 'machine', '--backups', backups]),
        {},
        other,
      );
      const r = overlapping.result!;
      assert.equal(r.killedApply, undefined, JSON.stringify(r.killedApply));
      assert.ok(!r.notices?.some((n) => n.code === 'KilledApplyFound'), JSON.stringify(r.notices));
      const notice = r.notices?.find((n) => n.code === 'ApplyMayBeRunning');
      assert.ok(notice, explain(overlapping));
      assert.ok(notice.message.includes(live) && says.test(notice.message), notice.message);
      assert.deepEqual(markers(backups), [live], 'the live apply keeps its marker');

      await rm(slow);
      const done = await exited;
      assert.equal(done.exitCode, 0, done.stderr.slice(-3000));
      assert.deepEqual(markers(backups), [], 'the live apply deleted its own marker when it ended');
    });
  }

  it('markers of runs elsewhere: one whose --deadline has passed is reported as killed and deleted; one without a deadline is named and left until a person deletes it', async (t) => {
    const s = await scenario(t, modules.base);
    const backups = join(s.out, 'backups');
    const elsewhere = { host: 'another-node', pid: 4242 };
    const marker = (name: string, fields: object) => {
      mkdirSync(join(backups, name), { recursive: true, mode: 0o700 });
      const content = {
        kind: 'ApplyMarker',
        op: 'apply',
        planHash: 'a'.repeat(64),
        startedAt: '2026-01-01T10:00:00.000Z',
        writer: elsewhere,
        addressesLeftOut: 0,
        ...fields,
      };
      writeFileSync(join(backups, name, 'manifest.json'), `${JSON.stringify(content)}\n`, { mode: 0o600 });
    };
    marker('applying-20260101t100000000z', {
      runsUntil: '2026-01-01T11:00:00.000Z',
      addresses: ['terraform_data.late'],
    });
    marker('applying-20260101t100500000z', { addresses: ['terraform_data.unknown'] });

    const first = await s.run('plan');
    assert.equal(first.exitCode, 0, explain(first));
    const r = first.result!;
    assert.equal(r.killedApply?.marker, `${backups}/applying-20260101t100000000z`, JSON.stringify(r.killedApply));
    assert.deepEqual(r.killedApply?.addresses, ['terraform_data.late']);
    assert.equal(r.killedApply?.earlier, 0);
    const killed = r.notices?.filter((n) => n.code === 'KilledApplyFound') ?? [];
    assert.equal(killed.length, 1, JSON.stringify(r.notices));
    assert.match(killed[0]!.message, /its --deadline has passed/);
    const live = r.notices?.filter((n) => n.code === 'ApplyMayBeRunning') ?? [];
    assert.equal(live.length, 1, JSON.stringify(r.notices));
    assert.match(live[0]!.message, /applying-20260101t100500000z/);
    assert.match(live[0]!.message, /ran without --deadline/);
    assert.match(live[0]!.message, /terraform_data\.unknown/);
    assert.deepEqual(
      markers(backups),
      ['applying-20260101t100500000z'],
      'the killed one deleted, the unknown one left',
    );

    const second = await s.run('plan');
    assert.equal(second.result!.killedApply, undefined, explain(second));
    assert.ok(
      second.result!.notices?.some((n) => n.code === 'ApplyMayBeRunning'),
      'named on every run',
    );
    await rm(join(backups, 'applying-20260101t100500000z'), { recursive: true });
    const third = await s.run('plan');
    assert.ok(!third.result!.notices?.some((n) => /Apply/.test(n.code)), JSON.stringify(third.result!.notices));
  });

  it('a failed apply leaves no marker, and the next run reports none', async (t) => {
    const s = await scenario(t, modules.base);
    await s.useModule({
      ...modules.base,
      'main.tf': `${modules.base['main.tf']}
resource "terraform_data" "fails" {
  provisioner "local-exec" {
    command = "exit 1"
  }
}
`,
    });
    const failed = await s.run('apply', ['--kind', 'machine', '--guard', 'off']);
    assert.equal(failed.exitCode, 1, explain(failed));
    assert.equal(failed.result!.reason, 'ApplyFailed');
    assert.deepEqual(markers(join(s.out, 'backups')), []);
    const next = await s.run('plan');
    assert.equal(next.result!.killedApply, undefined, explain(next));
    assert.ok(!Result.parse(next.result).notices?.some((n) => n.code === 'KilledApplyFound'));
  });
});
