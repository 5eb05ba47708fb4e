// The fault matrix (contract/sections/faults.md) with the fake terraform, by step: every step the
// runner runs terraform in × a non-zero exit and a death by SIGKILL. Each run leaves a well-formed
// result and termination message that agree with the exit code, nothing applied after the failed
// step, no process behind it, and no secret terraform leaked.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { processEnds } from '../support/tf-modules.ts';
import { checkRun, cleanupFake, FAKE_STEPS, failedAt, fakeScenario, runWithFake } from './faults.support.ts';

describe('fault matrix: every step × exit non-zero, killed by a signal', { concurrency: 3 }, () => {
  for (const step of FAKE_STEPS) {
    it(`${step}: exits 1 → ${failedAt(step).outcome}/${failedAt(step).reason}, exit ${failedAt(step).exit}`, async (t) => {
      const s = await fakeScenario(t);
      cleanupFake(t, s);
      const run = await runWithFake(s, { fake: { faults: [`${step}:exit=1`] } });
      const result = checkRun(run, s, failedAt(step), step);
      if (step !== 'version')
        assert.match(result.message, /exited 1|fake failure/, 'the message says what terraform did');
    });

    it(`${step}: killed by SIGKILL → ${failedAt(step).outcome}/${failedAt(step).reason}, exit ${failedAt(step).exit}`, async (t) => {
      const s = await fakeScenario(t);
      cleanupFake(t, s);
      const run = await runWithFake(s, { fake: { faults: [`${step}:signal=SIGKILL`] } });
      const result = checkRun(run, s, failedAt(step), step);
      if (step !== 'version' && step !== 'validate')
        assert.match(result.message, /SIGKILL/, 'the message names the signal');
    });
  }
});

describe('what terraform leaves behind or leaks', () => {
  it('what terraform leaves in its process group is ended after every command, also on success', async (t) => {
    const s = await fakeScenario(t);
    cleanupFake(t, s);
    const run = await runWithFake(s, { fake: { faults: ['init:orphan'] } });
    checkRun(run, s, { outcome: 'succeeded', reason: 'ApplySucceeded', exit: 0 }, undefined);
    const orphan = Number(readFileSync(s.orphanPidFile, 'utf8').trim());
    assert.ok(orphan > 0);
    assert.ok(await processEnds(orphan), 'the orphan of init still runs');
  });

  it('terraform that leaks a secret while failing: the value never reaches any byte the runner writes', async (t) => {
    const s = await fakeScenario(t);
    cleanupFake(t, s);
    const canary = 'CANARY-fault-l3ak-Xy7';
    await writeFile(join(s.inputs, 'sensitive.tfvars.json'), JSON.stringify({ token: canary }));
    for (const step of ['init', 'plan', 'apply'] as const) {
      const run = await runWithFake(s, { fake: { faults: [`${step}:leak-secret`, `${step}:exit=1`], secret: canary } });
      checkRun(run, s, failedAt(step), step);
      const everything = `${run.stdoutTail}${run.stderrTail}${run.resultText}${run.termination}`;
      assert.ok(
        run.stderrTail.includes('The root module does not declare a variable named'),
        'the fake printed its diagnostic',
      );
      assert.ok(!everything.includes(canary), `the canary leaked in ${step}`);
    }
  });
});
