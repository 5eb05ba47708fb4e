// The driver's way in, without starting a process: the argv of every command, the environment rules, exit
// codes read in one place, and the tail of stderr it keeps. What createTerraform does with the processes it
// starts: driver.e2e.test.ts. The stderr rules: diagnostics.test.ts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyArgs } from '../../src/terraform/apply.ts';
import { LineTail, terraformEnv } from '../../src/terraform/exec.ts';
import { Masker } from '../../src/masking/mask.ts';
import { initArgs } from '../../src/terraform/init.ts';
import { forceUnlockArgs, lockProbeArgs } from '../../src/terraform/lock.ts';
import { planArgs } from '../../src/terraform/plan.ts';
import { showPlanArgs } from '../../src/terraform/show.ts';
import { statePullArgs, statePushArgs } from '../../src/terraform/state.ts';
import { interpretExit, planFileArgument } from '../../src/terraform/terraform.ts';
import { validateArgs } from '../../src/terraform/validate.ts';
import { versionArgs } from '../../src/terraform/version.ts';

describe('driver: arguments and environment', () => {
  it('builds argument arrays, never a shell string', () => {
    assert.deepEqual(
      planArgs({
        out: '/p',
        varFiles: ['/v.json'],
        vars: { captf_inputs_hash: 'h' },
        lockTimeout: '30s',
        destroy: true,
      }),
      [
        'plan',
        '-input=false',
        '-no-color',
        '-detailed-exitcode',
        '-out=/p',
        '-lock-timeout=30s',
        '-destroy',
        '-var-file=/v.json',
        '-var',
        'captf_inputs_hash=h',
      ],
    );
    assert.deepEqual(applyArgs({ planFile: '/p' }), ['apply', '-input=false', '-no-color', '/p']);
    assert.deepEqual(initArgs({ backendConfigs: ['a.hcl'], lockfileReadonly: true }), [
      'init',
      '-input=false',
      '-no-color',
      '-lockfile=readonly',
      '-backend-config=a.hcl',
    ]);
  });

  it('removes what would change terraform behind the runner and marks automation', () => {
    const env = terraformEnv({
      PATH: '/bin',
      TF_CLI_ARGS: '-x',
      TF_CLI_ARGS_plan: '-y',
      TF_VAR_secret: 's',
      TF_WORKSPACE: 'w',
      TF_LOG: 'trace',
      TF_DATA_DIR: 'd',
      AWS_REGION: 'eu',
      TF_PLUGIN_CACHE_DIR: '/c',
    });
    assert.deepEqual(Object.keys(env).sort(), [
      'AWS_REGION',
      'CHECKPOINT_DISABLE',
      'PATH',
      'TF_INPUT',
      'TF_IN_AUTOMATION',
      'TF_PLUGIN_CACHE_DIR',
    ]);
    assert.equal(env.TF_IN_AUTOMATION, '1');
  });

  it('interprets exit codes in one place', () => {
    assert.equal(interpretExit('plan', 2, true), 'changes');
    assert.equal(interpretExit('plan', 2, false), 'error');
    assert.equal(interpretExit('apply', 2), 'error');
    assert.equal(interpretExit('plan', 0, true), 'ok');
    assert.equal(interpretExit('plan', 1, true), 'error');
  });
});

describe('driver: the argv of every command', () => {
  it('init: the backend skipped (contract check), backend config files in order', () => {
    assert.deepEqual(initArgs(), ['init', '-input=false', '-no-color']);
    assert.deepEqual(initArgs({ backend: false, lockfileReadonly: true }), [
      'init',
      '-input=false',
      '-no-color',
      '-backend=false',
      '-lockfile=readonly',
    ]);
    assert.deepEqual(initArgs({ backendConfigs: ['/a.hcl', '/b.hcl'] }), [
      'init',
      '-input=false',
      '-no-color',
      '-backend-config=/a.hcl',
      '-backend-config=/b.hcl',
    ]);
  });

  it('validate and show: their -json form', () => {
    assert.deepEqual(validateArgs(), ['validate', '-json', '-no-color']);
    assert.deepEqual(showPlanArgs('/private/plan.tfplan'), ['show', '-json', '-no-color', '/private/plan.tfplan']);
  });

  it('plan: the refresh-only plan (refresh and drift), a variable value as one argument', () => {
    assert.deepEqual(planArgs({ out: '/p', refreshOnly: true, lockTimeout: '5m' }), [
      'plan',
      '-input=false',
      '-no-color',
      '-detailed-exitcode',
      '-out=/p',
      '-lock-timeout=5m',
      '-refresh-only',
    ]);
    // A value with spaces or quotes is one argument: there is no shell to split it.
    assert.deepEqual(planArgs({ out: '/p', vars: { name: 'a "b" c; rm -rf /' } }).slice(-2), [
      '-var',
      'name=a "b" c; rm -rf /',
    ]);
  });

  it('a held plan is /dev/fd/3 for show and apply, and terraform inherits its descriptor', () => {
    assert.deepEqual(planFileArgument({ fd: 17 }), { arg: '/dev/fd/3', passFds: [17] });
    assert.deepEqual(planFileArgument('/p'), { arg: '/p', passFds: [] });
    assert.deepEqual(showPlanArgs({ fd: 17 }), ['show', '-json', '-no-color', '/dev/fd/3']);
    assert.deepEqual(applyArgs({ planFile: { fd: 17 }, lockTimeout: '30s' }), [
      'apply',
      '-input=false',
      '-no-color',
      '-lock-timeout=30s',
      '/dev/fd/3',
    ]);
  });

  it('state pull and state push (restore forces another lineage; errored.tfstate is pushed with the lock timeout)', () => {
    assert.deepEqual(statePullArgs(), ['state', 'pull', '-no-color']);
    assert.deepEqual(statePushArgs('/private/restore.tfstate'), [
      'state',
      'push',
      '-no-color',
      '/private/restore.tfstate',
    ]);
    assert.deepEqual(statePushArgs('/private/restore.tfstate', { force: true, lockTimeout: '30s' }), [
      'state',
      'push',
      '-no-color',
      '-force',
      '-lock-timeout=30s',
      '/private/restore.tfstate',
    ]);
  });

  it('force-unlock and the lock probe (which changes nothing and never waits for the lock)', () => {
    assert.deepEqual(forceUnlockArgs('1b2c'), ['force-unlock', '-no-color', '-force', '1b2c']);
    assert.deepEqual(lockProbeArgs(), [
      'state',
      'rm',
      '-dry-run',
      '-lock-timeout=0s',
      '-no-color',
      'terraform_data.captf_runner_lock_probe_0000',
    ]);
  });

  it('version: both forms (only the human one tells OpenTofu apart)', () => {
    assert.deepEqual(versionArgs(), ['version']);
  });
});

/** A terraform that is node running `script`: the handle does not care which binary it starts. */

describe('driver: the tail of stderr', () => {
  it('keeps the tail of stderr as cutting it at every line would: whole lines, at most 16 KiB, and whether it was cut', () => {
    const LIMIT = 16 * 1024;
    const cutAtEveryLine = (lines: string[]) => {
      let tail = '';
      let complete = true;
      for (const line of lines) {
        const grown = tail + line + '\n';
        if (grown.length > LIMIT) complete = false;
        const cut = grown.length <= LIMIT ? grown : grown.slice(-LIMIT);
        tail = grown.length <= LIMIT ? grown : cut.slice(cut.indexOf('\n') + 1);
      }
      return { tail, complete };
    };
    let seed = 7;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    for (let round = 0; round < 40; round++) {
      // Lines from empty to longer than the tail itself, a few to thousands of them.
      const lines = Array.from({ length: random(round < 10 ? 20 : 3000) }, (_, i) =>
        `${i}:`.padEnd(random(4) === 0 ? random(3 * LIMIT) : random(200), 'x'),
      );
      const tail = new LineTail();
      for (const line of lines) tail.push(line);
      const expected = cutAtEveryLine(lines);
      assert.equal(tail.text(), expected.tail, `round ${round}`);
      assert.equal(tail.complete, expected.complete, `round ${round}`);
    }
  });

  it('masks the tail before it is cut: a secret terraform wrapped across the cut is masked whole, no part of it kept', () => {
    const LIMIT = 16 * 1024;
    const [head, end] = ['Kq7Zx'.repeat(14), 'Vw9JmYq8Rz'.repeat(2)];
    const masker = new Masker();
    masker.add(`${head} ${end}`, 'var.pw');
    const after = Array.from({ length: 408 }, () => 'x'.repeat(39));
    // The cut falls in the secret's first line: the tail would start with its second, alone.
    const before = Array.from({ length: 1000 }, (_, i) => `line ${i}`);
    const tail = new LineTail(masker);
    for (const line of [...before, head, end, ...after]) tail.push(line);
    assert.ok(after.length * 40 + end.length + 1 < LIMIT && after.length * 40 + end.length + head.length + 2 > LIMIT);
    const text = tail.text();
    assert.equal(tail.complete, false);
    assert.ok(text.startsWith('(sensitive value)\n'), text.slice(0, 100));
    assert.ok(!text.includes('Vw9J') && !text.includes('Kq7Z'), 'no part of the secret');
    const unmasked = new LineTail();
    for (const line of [...before, head, end, ...after]) unmasked.push(line);
    assert.ok(unmasked.text().startsWith(`${end}\n`), "without a masker the tail starts at the secret's second line");
  });
});
