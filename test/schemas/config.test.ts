// Settings per op: each op's schema takes its own settings and their rules; the command line's
// flags and help come from the same table.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Command } from 'commander';
import { buildCli, parseCommandLine } from '../../src/cli.ts';
import {
  OP_SCHEMAS,
  Settings,
  durationMs,
  envName,
  loadHashSettings,
  loadSettings,
  settingsOfInvalidRun,
  unknownSettingVariables,
} from '../../src/schemas/config.ts';
import {
  HASH_SETTINGS,
  OP_REPORT_FLAGS,
  OP_SETTINGS,
  REPORT_FLAGS,
  SETTING_OPTIONS,
  flagName,
  settingHelp,
  type SettingOption,
} from '../../src/schemas/setting-options.ts';
import { Op } from '../../src/schemas/result.ts';
import { RunnerError } from '../../src/errors.ts';

const PLAN_HASH = 'a'.repeat(64);

const refusal = (fn: () => unknown): RunnerError => {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof RunnerError);
    return error;
  }
  assert.fail('expected a usage error');
};

describe('settings per op', () => {
  it('the guard off for a cluster is refused by the apply schema, with its own reason', () => {
    const e = refusal(() => loadSettings('apply', { guard: 'off' }, {}));
    assert.equal(e.kind, 'usage');
    assert.equal(e.reason, 'GuardRequired');
    assert.match(e.message, /cannot be turned off for a cluster: drop --guard off \(CAPTF_GUARD\)/);
    assert.equal(
      refusal(() => loadSettings('apply', {}, { CAPTF_GUARD: 'off', CAPTF_KIND: 'cluster' })).reason,
      'GuardRequired',
    );
    assert.equal(loadSettings('apply', { guard: 'off', kind: 'pool' }, {}).guard, 'off');
    // The approval of a plan artifact binds the plan, so the guard is not consulted: a cluster passes the default (on), and off stays refused (one rule).
    assert.equal(loadSettings('apply', { planArtifact: '/a', approvedPlanHash: PLAN_HASH }, {}).guard, 'on');
    assert.equal(
      refusal(() => loadSettings('apply', { guard: 'off', planArtifact: '/a', approvedPlanHash: PLAN_HASH }, {}))
        .reason,
      'GuardRequired',
    );
    assert.equal(
      loadSettings('apply', { guard: 'off', kind: 'machine', planArtifact: '/a', approvedPlanHash: PLAN_HASH }, {})
        .guard,
      'off',
    );
  });

  it('--plan-artifact without a plan hash is refused by the apply schema', () => {
    for (const approvedPlanHash of [undefined, 'pending', PLAN_HASH.toUpperCase()]) {
      const e = refusal(() => loadSettings('apply', { planArtifact: '/a', approvedPlanHash }, {}));
      assert.equal(e.reason, 'PlanNotApproved');
      assert.match(e.message, /--plan-artifact needs --approved-plan-hash/);
    }
  });

  it('restore needs --backup and unlock --lock-id, by their schemas', () => {
    const backup = refusal(() => loadSettings('restore', {}, {}));
    assert.equal(backup.reason, 'BackupMissing');
    assert.match(backup.message, /pass --backup DIR/);
    const lockId = refusal(() => loadSettings('unlock', {}, { CAPTF_BACKUP: '/b' }));
    assert.equal(lockId.reason, 'LockIdMissing');
    assert.match(lockId.message, /unlock needs --lock-id ID/);
    assert.equal(loadSettings('unlock', {}, { CAPTF_LOCK_ID: 'l' }).lockId, 'l');
  });

  it("--store: a postgres URL, postgres (the pg backend's settings) or an S3 location, for one object, in every op", () => {
    for (const store of [
      'postgres://captf@db:5432/captf?schema=captf_tc_prod',
      'postgresql://db/captf',
      'postgres',
      's3://captf-artifacts/fleet',
      's3://captf-artifacts',
    ]) {
      for (const op of Op.options)
        assert.equal(
          loadSettings(op, { store, object: 'prod', namespace: 'team-a', backup: '/b', lockId: 'l' }, {}).store,
          store,
          `${op} ${store}`,
        );
    }
    assert.equal(
      loadSettings('apply', {}, { CAPTF_STORE: 's3://captf-artifacts/x', CAPTF_OBJECT: 'prod', CAPTF_NAMESPACE: 'a' })
        .store,
      's3://captf-artifacts/x',
    );
    for (const store of ['mysql://db/x', 'pg', 's3://Captf/x', 's3://a', '/a/dir', 'secret:ns/prefix']) {
      const e = refusal(() => loadSettings('plan', { store, object: 'prod', namespace: 'a' }, {}));
      assert.equal(e.reason, 'SettingsInvalid', store);
      assert.match(e.message, /--store \(or CAPTF_STORE\)/);
    }
    const e = refusal(() => loadSettings('destroy', { store: 'postgres' }, {}));
    assert.equal(e.reason, 'StoreNeedsObject');
    assert.match(e.message, /pass --object NAME \(CAPTF_OBJECT\) and --namespace NS \(CAPTF_NAMESPACE\) too/);
    // The store keys an object by its namespace too: outside a cluster --namespace is needed; in one the Job's namespace stands in.
    const noNamespace = refusal(() => loadSettings('plan', { store: 'postgres', object: 'prod' }, {}));
    assert.equal(noNamespace.reason, 'StoreNeedsObject');
    assert.match(noNamespace.message, /by its namespace, kind and name: pass --namespace NS \(CAPTF_NAMESPACE\) too$/);
    assert.equal(
      loadSettings('plan', { store: 'postgres', object: 'prod', jobName: 'j', jobUid: 'u' }, {}).namespace,
      undefined,
    );
  });

  it('--object is a Kubernetes object name (DNS-1123 subdomain) and --namespace a namespace (DNS-1123 label): anything else is refused, naming the value and the rule', () => {
    for (const object of ['prod', 'prod-5f56359ef1', 'a.b-c', 'x'.repeat(253)])
      assert.equal(loadSettings('plan', { object }, {}).object, object);
    for (const object of ['Prod', '../x', 'a/b', 'x'.repeat(254), 'x'.repeat(300), '-a', 'a-', 'a_b', 'a..b', '']) {
      const e = refusal(() => loadSettings('plan', { object }, {}));
      assert.equal(e.reason, 'SettingsInvalid', object);
      assert.ok(e.message.startsWith('invalid settings: --object (or CAPTF_OBJECT): '), e.message);
      assert.match(e.message, /is not a Kubernetes object name: a DNS-1123 subdomain, at most 253 characters/);
      assert.ok(e.message.includes(JSON.stringify(object.slice(0, 64))), e.message);
    }
    assert.match(
      refusal(() => loadSettings('plan', { object: 'x'.repeat(300) }, {})).message,
      /"x{64}"… \(300 characters\) is not/,
    );
    for (const namespace of ['team-a', 'a', 'x'.repeat(63)])
      assert.equal(loadSettings('plan', { namespace }, {}).namespace, namespace);
    for (const namespace of ['Team-A', 'team.a', 'team_a', '../x', 'a/b', 'x'.repeat(64), '-a']) {
      const e = refusal(() => loadSettings('destroy', {}, { CAPTF_NAMESPACE: namespace }));
      assert.equal(e.reason, 'SettingsInvalid', namespace);
      assert.ok(e.message.startsWith('invalid settings: --namespace (or CAPTF_NAMESPACE): '), e.message);
      assert.match(e.message, /is not a Kubernetes namespace: a DNS-1123 label, at most 63 characters/);
    }
  });

  it('a --deadline that leaves no time before the run stops itself is refused by every op, saying the rule and what to give instead', () => {
    for (const op of ['apply', 'plan', 'refresh', 'drift', 'destroy'] as const) {
      const e = refusal(() => loadSettings(op, { deadline: '25s' }, {}));
      assert.equal(e.reason, 'SettingsInvalid', op);
      assert.equal(
        e.message,
        '--deadline 25s leaves the run no time: it stops itself at the deadline − --stop-grace (20s) − 5s (to stop terraform and write the result), which is before it starts. Give a --deadline longer than 25s, or a shorter --stop-grace; nothing was run',
      );
    }
    assert.equal(loadSettings('plan', { deadline: '26s' }, {}).deadline, '26s');
    assert.equal(loadSettings('plan', { deadline: '7s', stopGrace: '1s' }, {}).deadline, '7s');
    // In a cluster the hand-back to Kubernetes needs its 15 s before the deadline too.
    const inCluster = refusal(() => loadSettings('apply', { deadline: '40s', jobName: 'j', jobUid: 'u' }, {}));
    assert.match(inCluster.message, /− 15s \(the hand-back to Kubernetes\).*longer than 40s/);
    // The floor of a Job: CAPTF_DEADLINE is activeDeadlineSeconds − 300, so 340 s with the default --stop-grace.
    assert.match(
      inCluster.message,
      /longer than 40s \(a Job passes its activeDeadlineSeconds − 300: the shortest Job has activeDeadlineSeconds above 340s/,
    );
    const shortJob = refusal(() =>
      loadSettings('drift', { jobName: 'j', jobUid: 'u' }, { CAPTF_DEADLINE: '20s', CAPTF_STOP_GRACE: '30s' }),
    );
    assert.match(shortJob.message, /above 350s/);
    assert.equal(
      refusal(() => loadSettings('restore', { backup: '/b' }, { CAPTF_DEADLINE: '5s' })).reason,
      'SettingsInvalid',
    );
  });

  it('an empty --expect-lineage means none, as an empty CAPTF_EXPECTED_LINEAGE does', () => {
    assert.equal(loadSettings('apply', { expectLineage: '' }, {}).expectLineage, undefined);
    assert.equal(loadSettings('apply', {}, { CAPTF_EXPECTED_LINEAGE: '' }).expectLineage, undefined);
    assert.equal(loadSettings('drift', { expectLineage: 'l1' }, { CAPTF_EXPECTED_LINEAGE: '' }).expectLineage, 'l1');
    // Any other empty flag stays refused: only the lineage has a meaning for "none" the controller passes.
    assert.equal(refusal(() => loadSettings('apply', { lockTimeout: '' }, {})).reason, 'SettingsInvalid');
  });

  it('an invalid value beside a broken rule is named as an invalid setting', () => {
    const e = refusal(() => loadSettings('apply', { guard: 'off', chunkBytes: '1' }, {}));
    assert.equal(e.reason, 'SettingsInvalid');
    assert.match(e.message, /--chunk-bytes \(or CAPTF_CHUNK_BYTES\)/);
  });

  it('an op ignores the variables of the settings it does not take, even invalid ones', () => {
    const others = {
      CAPTF_GUARD: 'maybe',
      CAPTF_PLAN_ARTIFACT: '/a',
      CAPTF_APPROVED_PLAN_HASH: 'pending',
      CAPTF_LOCK_ID: 'l',
      CAPTF_BACKUP: '/b',
      CAPTF_ARTIFACTS: '/art',
    };
    for (const op of ['plan', 'refresh', 'drift', 'destroy', 'restore', 'unlock'] as const) {
      const settings = loadSettings(op, {}, { ...others, CAPTF_KIND: 'machine' });
      assert.equal(settings.kind, 'machine', `${op} reads the variables of its settings`);
      assert.equal(settings.guard, SETTING_OPTIONS.guard.default, `${op}: not its setting, so the default`);
    }
    assert.equal(loadSettings('plan', {}, others).artifacts, '/art');
    assert.equal(loadSettings('unlock', {}, others).lockId, 'l');
    assert.equal(loadSettings('restore', {}, others).backup, '/b');
    assert.equal(loadSettings('restore', {}, others).lockId, undefined);
    assert.equal(refusal(() => loadSettings('apply', {}, others)).reason, 'SettingsInvalid');
    assert.deepEqual(loadHashSettings({}, { ...others, CAPTF_CHUNK_BYTES: '1', CAPTF_IMAGE: 'img' }), {
      inputs: '/captf/inputs',
      image: 'img',
      kind: 'cluster',
    });
  });

  it('every op takes the settings of its schema, and every setting belongs to a command', () => {
    for (const op of Op.options)
      assert.deepEqual(Object.keys(OP_SCHEMAS[op].shape).sort(), [...OP_SETTINGS[op]].sort(), op);
    const taken = new Set([...Object.values(OP_SETTINGS).flat(), ...HASH_SETTINGS]);
    assert.deepEqual([...taken].sort(), Object.keys(Settings.shape).sort());
  });

  it('an invalid run keeps the settings that are valid on their own, for its result', () => {
    const settings = settingsOfInvalidRun(
      { out: '/o', object: 'demo', guard: 'off', chunkBytes: '1' },
      { CAPTF_NAMESPACE: 'ns', CAPTF_TERMINATION_LOG: '' },
    );
    assert.equal(settings.out, '/o');
    assert.equal(settings.object, 'demo');
    assert.equal(settings.namespace, 'ns');
    assert.equal(settings.terminationLog, SETTING_OPTIONS.terminationLog.default);
    assert.equal(settings.chunkBytes, SETTING_OPTIONS.chunkBytes.default);
    assert.equal(settings.guard, 'on');
    assert.equal(settingsOfInvalidRun({ out: '' }, {}).out, SETTING_OPTIONS.out.default);
  });
});

describe('the command line', () => {
  const cli = buildCli();
  const command = (name: string) => cli.commands.find((c: Command) => c.name() === name)!;

  it('each op has the flags of its settings and no other', () => {
    for (const op of Op.options) {
      assert.deepEqual(
        command(op)
          .options.map((o) => o.long)
          .sort(),
        [...OP_SETTINGS[op], ...OP_REPORT_FLAGS[op]].map(flagName).sort(),
        op,
      );
    }
    assert.deepEqual(
      command('hash')
        .options.map((o) => o.long)
        .sort(),
      [...HASH_SETTINGS.map(flagName), '--json'].sort(),
    );
  });

  it('the help states each default the schema applies, from the one table', () => {
    const defaults = Settings.parse({});
    for (const op of Op.options) {
      for (const option of command(op).options) {
        const name = option.attributeName() as keyof typeof SETTING_OPTIONS;
        if (name in REPORT_FLAGS) {
          // A reporting flag has no setting, so no CAPTF_* variable and no default (contract.md §1).
          assert.match(option.description, /a flag only, no CAPTF_\* variable/);
          continue;
        }
        assert.equal(option.description, settingHelp(SETTING_OPTIONS[name]));
        const stated = (SETTING_OPTIONS[name] as SettingOption).default;
        if (stated !== undefined)
          assert.deepEqual(defaults[name], stated, `${flagName(name)}: the schema's default is the table's`);
        if (typeof stated === 'number' || (typeof stated === 'string' && stated !== ''))
          assert.ok(option.description.includes(`(default ${stated}`), option.description);
      }
    }
    assert.match(command('apply').options.find((o) => o.long === '--stop-grace')!.description, /\(default 20s\)/);
    assert.equal(envName('stopGrace'), 'CAPTF_STOP_GRACE');
  });

  it('parsed, it is what to run with its raw flags: nothing runs while it is parsed', async () => {
    const argv = (...args: string[]) => ['node', 'captf-runner', ...args];
    assert.deepEqual(await parseCommandLine(argv('plan', '--kind', 'pool', '--out', '/o')), {
      command: 'op',
      op: 'plan',
      flags: { kind: 'pool', out: '/o' },
    });
    assert.deepEqual(await parseCommandLine(argv('classify', '-', '--json')), {
      command: 'classify',
      file: '-',
      flags: { json: true },
    });
    assert.deepEqual(await parseCommandLine(argv('hash', '--inputs', '/i')), {
      command: 'hash',
      flags: { inputs: '/i' },
    });
    assert.deepEqual(await parseCommandLine(argv('contract', 'check', '--root', '/r')), {
      command: 'contract check',
      flags: { root: '/r' },
    });
  });
});

describe('settings', () => {
  it('takes a flag, else CAPTF_*, else the default', () => {
    assert.equal(envName('approvedHash'), 'CAPTF_APPROVED_HASH');
    const s = loadSettings(
      'apply',
      { kind: 'pool' },
      { CAPTF_KIND: 'machine', CAPTF_MODULE: '/m', CAPTF_BACKEND_CONFIG: 'a.hcl,b.hcl' },
    );
    assert.equal(s.kind, 'pool');
    assert.equal(s.module, '/m');
    assert.deepEqual(s.backendConfig, ['a.hcl', 'b.hcl']);
    assert.equal(s.inputs, '/captf/inputs');
  });

  it('--allow-plaintext-backups: a boolean flag, or CAPTF_ALLOW_PLAINTEXT_BACKUPS, default off', () => {
    assert.equal(loadSettings('apply', {}, {}).allowPlaintextBackups, false);
    assert.equal(loadSettings('apply', { allowPlaintextBackups: true }, {}).allowPlaintextBackups, true);
    assert.equal(loadSettings('apply', {}, { CAPTF_ALLOW_PLAINTEXT_BACKUPS: 'true' }).allowPlaintextBackups, true);
    assert.equal(loadSettings('apply', {}, { CAPTF_ALLOW_PLAINTEXT_BACKUPS: 'no' }).allowPlaintextBackups, false);
  });

  it('names the flag and the variable when a value is wrong', () => {
    assert.throws(() => loadSettings('apply', { guard: 'maybe' }, {}), /--guard \(or CAPTF_GUARD\)/);
    assert.throws(
      () => loadSettings('apply', {}, { CAPTF_LOCK_TIMEOUT: 'soon' }),
      /--lock-timeout \(or CAPTF_LOCK_TIMEOUT\)/,
    );
  });

  it('reads durations as terraform writes them, or whole seconds (what a controller has from activeDeadlineSeconds)', () => {
    assert.equal(durationMs('1h30m'), 5_400_000);
    assert.equal(durationMs('45s'), 45_000);
    assert.equal(durationMs('600'), 600_000);
    assert.equal(durationMs('2h5s'), 7_205_000);
    for (const text of ['1.5h', '30 s', '1m1h', 'h', '', '-5', '5d', '1h30'])
      assert.throws(
        () => durationMs(text),
        (e: RunnerError) =>
          e.reason === 'SettingsInvalid' &&
          /whole seconds \(600\), or hours, minutes and seconds in that order/.test(e.message),
        text,
      );
    // terraform's -lock-timeout needs a unit: whole seconds reach it as such.
    assert.equal(loadSettings('apply', {}, { CAPTF_LOCK_TIMEOUT: '600', CAPTF_DEADLINE: '3300' }).lockTimeout, '600s');
    assert.equal(loadSettings('apply', {}, { CAPTF_DEADLINE: '3300' }).deadline, '3300s');
    assert.throws(
      () => loadSettings('apply', {}, { CAPTF_DEADLINE: '1.5h' }),
      /--deadline \(or CAPTF_DEADLINE\): a duration: whole seconds/,
    );
  });

  it('names every CAPTF_* variable that is no setting (a misspelt name is a notice, never silence), and only those', () => {
    const notices = unknownSettingVariables({
      CAPTF_LOCK_TIMOUT: '5m', // one letter missing
      CAPTF_APROVED_HASH: 'abc',
      CAPTF_SUMMARY_MD: '/tmp/x.md', // a report flag: flags only
      CAPTF_WHATEVER_ELSE: '1',
      CAPTF_LOCK_TIMEOUT: '5m', // settings, of this op or another: never named
      CAPTF_LOCK_ID: 'x',
      CAPTF_TERRAFORM: '/bin/tofu',
      NOT_CAPTF_LOCK_TIMOUT: '1',
    });
    assert.deepEqual(
      notices.map((n) => n.code),
      ['SettingVariableUnknown', 'SettingVariableUnknown', 'SettingVariableUnknown', 'SettingVariableUnknown'],
    );
    assert.deepEqual(
      notices.map((n) => n.message),
      [
        'CAPTF_APROVED_HASH is no setting of captf-runner and was ignored: did you mean CAPTF_APPROVED_HASH?',
        'CAPTF_LOCK_TIMOUT is no setting of captf-runner and was ignored: did you mean CAPTF_LOCK_TIMEOUT?',
        'CAPTF_SUMMARY_MD is no setting of captf-runner and was ignored: --summary-md is a flag only: no variable sets it',
        'CAPTF_WHATEVER_ELSE is no setting of captf-runner and was ignored: the settings and their variables are in contract.md §1',
      ],
    );
    // Every setting's variable is known: a Job's environment that carries them all says nothing.
    assert.deepEqual(
      unknownSettingVariables(Object.fromEntries(Object.keys(Settings.shape).map((key) => [envName(key), '1']))),
      [],
    );
  });
});
