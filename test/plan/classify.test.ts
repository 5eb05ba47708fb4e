// The classification rules, case by case (contract/sections/classification.md), and the terraform-json corpus.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { Classification } from '../../src/schemas/classification.ts';
import { RunnerError } from '../../src/errors.ts';
import { classifyPlan } from '../../src/plan/classify.ts';
import { noCounts } from '../../src/plan/actions.ts';
import { resourceChange, corpusFiles, corpusPath, INPUTS_HASH_ADDRESS, planDocument } from './plans.support.ts';

const ignore = { ignoreAddresses: new Set([INPUTS_HASH_ADDRESS]) };
/** How every `why` of an entry at the reserved address starts. */
const RESERVED = `${INPUTS_HASH_ADDRESS} is reserved for the runner's own resource, which the runner only creates, updates in place or keeps`;
const classify = (sections: Parameters<typeof planDocument>[0]) =>
  Classification.parse(classifyPlan(planDocument(sections), ignore));
const counts = (overrides: Partial<Classification['counts']> = {}) => ({ ...noCounts(), ...overrides });

interface Case {
  name: string;
  sections: Parameters<typeof planDocument>[0];
  destructive: boolean;
  hasResourceChanges: boolean;
  counts: Partial<Classification['counts']>;
  /** Expected destructive entries (compared field by field). */
  entries?: Partial<Classification['destructive'][number]>[];
}

const cases: Case[] = [
  {
    name: 'create',
    sections: { resource_changes: [resourceChange('terraform_data.a', ['create'])] },
    destructive: false,
    hasResourceChanges: true,
    counts: { create: 1 },
  },
  {
    name: 'update in place',
    sections: {
      resource_changes: [resourceChange('terraform_data.a', ['update'], {}, { after_unknown: { output: true } })],
    },
    destructive: false,
    hasResourceChanges: true,
    counts: { update: 1 },
  },
  {
    name: 'replace, destroy before create',
    sections: {
      resource_changes: [
        resourceChange(
          'terraform_data.a',
          ['delete', 'create'],
          { action_reason: 'replace_because_cannot_update' },
          { replace_paths: [['triggers_replace']] },
        ),
      ],
    },
    destructive: true,
    hasResourceChanges: true,
    counts: { replace: 1 },
    entries: [
      {
        address: 'terraform_data.a',
        action: 'replace',
        actions: ['delete', 'create'],
        reason: 'replace_because_cannot_update',
        replacePaths: [['triggers_replace']],
      },
    ],
  },
  {
    name: 'replace, create before destroy',
    sections: {
      resource_changes: [
        resourceChange(
          'terraform_data.a',
          ['create', 'delete'],
          { action_reason: 'replace_because_cannot_update' },
          { replace_paths: [['triggers_replace']] },
        ),
      ],
    },
    destructive: true,
    hasResourceChanges: true,
    counts: { replace: 1 },
    entries: [{ action: 'replace', actions: ['create', 'delete'], reason: 'replace_because_cannot_update' }],
  },
  ...['replace_by_request', 'replace_because_tainted', 'replace_by_triggers'].map((reason) => ({
    name: `replace ${reason}`,
    sections: {
      resource_changes: [resourceChange('terraform_data.a', ['delete', 'create'], { action_reason: reason })],
    },
    destructive: true,
    hasResourceChanges: true,
    counts: { replace: 1 },
    entries: [{ action: 'replace' as const, reason }],
  })),
  ...[
    ['resource block removed', 'terraform_data.gone', 'delete_because_no_resource_config'],
    ['count shrink', 'terraform_data.c[2]', 'delete_because_count_index'],
    ['for_each key removed', 'terraform_data.e["b"]', 'delete_because_each_key'],
    ['module call removed', 'module.m.terraform_data.x', 'delete_because_no_resource_config'],
    ['module count shrink', 'module.m[1].terraform_data.x', 'delete_because_no_module'],
  ].map(([name, address, reason]) => ({
    name: `delete: ${name}`,
    sections: { resource_changes: [resourceChange(address!, ['delete'], { action_reason: reason! })] },
    destructive: true,
    hasResourceChanges: true,
    counts: { delete: 1 },
    entries: [{ address, action: 'delete' as const, actions: ['delete'], reason }],
  })),
  {
    name: 'forget (removed with destroy = false) despite its delete reason',
    sections: {
      resource_changes: [
        resourceChange('terraform_data.kept', ['forget'], { action_reason: 'delete_because_no_resource_config' }),
      ],
    },
    destructive: false,
    hasResourceChanges: true,
    counts: { forget: 1 },
  },
  ...[
    ['create', 'forget'],
    ['forget', 'create'],
  ].map((actions) => ({
    name: `replace whose old object is kept (lifecycle destroy = false): ${JSON.stringify(actions)}`,
    sections: {
      resource_changes: [
        resourceChange('terraform_data.kept', actions, { action_reason: 'replace_because_cannot_update' }),
      ],
    },
    destructive: false,
    hasResourceChanges: true,
    counts: { create: 1, forget: 1 },
  })),
  {
    name: 'moved: no-op with previous_address still changes the state',
    sections: {
      resource_changes: [resourceChange('terraform_data.new', ['no-op'], { previous_address: 'terraform_data.old' })],
    },
    destructive: false,
    hasResourceChanges: true,
    counts: { noop: 1, move: 1 },
  },
  {
    name: 'moved and updated',
    sections: {
      resource_changes: [
        resourceChange('module.m.terraform_data.x', ['update'], { previous_address: 'terraform_data.x' }),
      ],
    },
    destructive: false,
    hasResourceChanges: true,
    counts: { update: 1, move: 1 },
  },
  {
    name: 'moved and replaced is destructive',
    sections: {
      resource_changes: [
        resourceChange('terraform_data.new', ['delete', 'create'], { previous_address: 'terraform_data.old' }),
      ],
    },
    destructive: true,
    hasResourceChanges: true,
    counts: { replace: 1, move: 1 },
  },
  {
    name: 'import block: no-op with importing',
    sections: {
      resource_changes: [resourceChange('terraform_data.i', ['no-op'], {}, { importing: { id: 'imported-id-123' } })],
    },
    destructive: false,
    hasResourceChanges: true,
    counts: { noop: 1, import: 1 },
  },
  {
    name: 'import with differing config',
    sections: {
      resource_changes: [resourceChange('terraform_data.i', ['update'], {}, { importing: { id: 'imported-id-123' } })],
    },
    destructive: false,
    hasResourceChanges: true,
    counts: { update: 1, import: 1 },
  },
  {
    name: 'import that replaces is destructive',
    sections: {
      resource_changes: [resourceChange('terraform_data.i', ['create', 'delete'], {}, { importing: { id: 'x' } })],
    },
    destructive: true,
    hasResourceChanges: true,
    counts: { replace: 1, import: 1 },
  },
  {
    name: 'data source read (changes no resource)',
    sections: {
      resource_changes: [
        {
          ...resourceChange('data.terraform_remote_state.s', ['read']),
          mode: 'data',
          action_reason: 'read_because_dependency_pending',
        },
      ],
    },
    destructive: false,
    hasResourceChanges: false,
    counts: { read: 1 },
  },
  {
    name: 'deposed object: two entries with the same address',
    sections: {
      resource_changes: [
        resourceChange('terraform_data.a', ['no-op']),
        resourceChange('terraform_data.a', ['delete'], { deposed: '7810d417' }),
      ],
    },
    destructive: true,
    hasResourceChanges: true,
    counts: { noop: 1, delete: 1 },
    entries: [{ address: 'terraform_data.a', deposed: '7810d417', action: 'delete', actions: ['delete'] }],
  },
  {
    name: 'nothing to do',
    sections: {
      resource_changes: [resourceChange('terraform_data.a', ['no-op']), resourceChange('terraform_data.b', ['no-op'])],
      applyable: false,
    },
    destructive: false,
    hasResourceChanges: false,
    counts: { noop: 2 },
  },
  {
    name: 'plan -destroy: deletes without reasons',
    sections: {
      resource_changes: [
        resourceChange('terraform_data.a', ['delete']),
        resourceChange('terraform_data.b[0]', ['delete']),
      ],
      output_changes: { out: { actions: ['delete'], before: 'x', after: null } },
    },
    destructive: true,
    hasResourceChanges: true,
    counts: { delete: 2 },
    entries: [{ address: 'terraform_data.a', action: 'delete', reason: undefined }, { address: 'terraform_data.b[0]' }],
  },
  {
    name: 'unknown action fails closed',
    sections: { resource_changes: [resourceChange('terraform_data.a', ['teleport'])] },
    destructive: true,
    hasResourceChanges: true,
    counts: { unknown: 1 },
    entries: [{ action: 'unknown', actions: ['teleport'], why: 'unknown action "teleport"' }],
  },
  {
    name: 'missing actions fail closed',
    sections: { resource_changes: [{ address: 'terraform_data.a', change: {} }] },
    destructive: true,
    hasResourceChanges: true,
    counts: { unknown: 1 },
    entries: [{ action: 'unknown', actions: [], why: 'change.actions is missing' }],
  },
  {
    name: 'actions that are not strings fail closed',
    sections: { resource_changes: [resourceChange('terraform_data.a', ['create', 7])] },
    destructive: true,
    hasResourceChanges: true,
    counts: { unknown: 1 },
    entries: [{ action: 'unknown', actions: ['create', '7'], why: 'change.actions is not a list of strings' }],
  },
  {
    name: 'an entry that is not an object fails closed',
    sections: { resource_changes: ['terraform_data.a'] },
    destructive: true,
    hasResourceChanges: true,
    counts: { unknown: 1 },
    entries: [
      { address: 'resource_changes[0]', action: 'unknown', why: 'resource_changes[0] is a string, not an object' },
    ],
  },
  {
    name: "the runner's own create, update or no-op of its inputs-hash resource never counts, nor its drift",
    sections: {
      resource_changes: [
        resourceChange(INPUTS_HASH_ADDRESS, ['create']),
        resourceChange(INPUTS_HASH_ADDRESS, ['update']),
        resourceChange(INPUTS_HASH_ADDRESS, ['no-op'], { previous_address: INPUTS_HASH_ADDRESS }, { importing: null }),
      ],
      resource_drift: [resourceChange(INPUTS_HASH_ADDRESS, ['update'])],
    },
    destructive: false,
    hasResourceChanges: false,
    counts: {},
  },
  {
    name: 'a moved block into the reserved address fails closed, naming it (the replace it hid)',
    sections: {
      resource_changes: [
        resourceChange(INPUTS_HASH_ADDRESS, ['delete', 'create'], {
          previous_address: 'terraform_data.cluster',
          action_reason: 'replace_because_cannot_update',
        }),
      ],
    },
    destructive: true,
    hasResourceChanges: true,
    counts: { replace: 1, move: 1 },
    entries: [
      {
        address: INPUTS_HASH_ADDRESS,
        action: 'replace',
        reason: 'replace_because_cannot_update',
        why: `${RESERVED}: actions ["delete","create"], moved from terraform_data.cluster`,
      },
    ],
  },
  {
    name: 'a move into the reserved address fails closed even as an update or a no-op',
    sections: {
      resource_changes: [
        resourceChange(INPUTS_HASH_ADDRESS, ['update'], { previous_address: 'terraform_data.cluster' }),
        resourceChange(INPUTS_HASH_ADDRESS, ['no-op'], { previous_address: `${INPUTS_HASH_ADDRESS}[0]` }),
      ],
    },
    destructive: true,
    hasResourceChanges: true,
    counts: { update: 1, noop: 1, move: 2 },
    entries: [
      { action: 'unknown', actions: ['update'], why: `${RESERVED}: moved from terraform_data.cluster` },
      { action: 'unknown', actions: ['no-op'], why: `${RESERVED}: moved from ${INPUTS_HASH_ADDRESS}[0]` },
    ],
  },
  {
    name: 'a move out of the reserved address fails closed',
    sections: {
      resource_changes: [
        resourceChange('terraform_data.cluster', ['no-op'], { previous_address: INPUTS_HASH_ADDRESS }),
      ],
    },
    destructive: true,
    hasResourceChanges: true,
    counts: { noop: 1, move: 1 },
    entries: [
      { address: 'terraform_data.cluster', action: 'unknown', why: `${RESERVED}: moved from ${INPUTS_HASH_ADDRESS}` },
    ],
  },
  {
    name: 'a delete, a replace, a forget, a deposed object or an import at the reserved address fails closed',
    sections: {
      resource_changes: [
        resourceChange(INPUTS_HASH_ADDRESS, ['delete']),
        resourceChange(INPUTS_HASH_ADDRESS, ['create', 'delete']),
        resourceChange(INPUTS_HASH_ADDRESS, ['forget']),
        resourceChange(INPUTS_HASH_ADDRESS, ['delete'], { deposed: 'aaaa0000' }),
        resourceChange(INPUTS_HASH_ADDRESS, ['create'], {}, { importing: { id: 'x' } }),
      ],
    },
    destructive: true,
    hasResourceChanges: true,
    counts: { delete: 2, replace: 1, forget: 1, create: 1, import: 1 },
    entries: [
      { action: 'delete', why: `${RESERVED}: actions ["delete"]` },
      { action: 'replace', why: `${RESERVED}: actions ["create","delete"]` },
      { action: 'unknown', why: `${RESERVED}: actions ["forget"]` },
      { action: 'delete', deposed: 'aaaa0000', why: `${RESERVED}: actions ["delete"], deposed object aaaa0000` },
      { action: 'unknown', why: `${RESERVED}: imported` },
    ],
  },
  {
    name: "an instance of the reserved address is never the runner's; other modules' addresses of that name are not reserved",
    sections: {
      resource_changes: [
        resourceChange(`${INPUTS_HASH_ADDRESS}[0]`, ['create']),
        resourceChange(`${INPUTS_HASH_ADDRESS}["a"]`, ['teleport']),
        resourceChange(`module.m.${INPUTS_HASH_ADDRESS}`, ['create']),
      ],
    },
    destructive: true,
    hasResourceChanges: true,
    counts: { create: 2, unknown: 1 },
    entries: [
      {
        address: `${INPUTS_HASH_ADDRESS}[0]`,
        action: 'unknown',
        why: `${RESERVED}: the instance ${INPUTS_HASH_ADDRESS}[0]`,
      },
      {
        address: `${INPUTS_HASH_ADDRESS}["a"]`,
        action: 'unknown',
        why: `${RESERVED}: unknown action "teleport", the instance ${INPUTS_HASH_ADDRESS}["a"]`,
      },
    ],
  },
];

test("in a destroy plan the runner's own action at its record is the delete; anything else there still fails closed", () => {
  const result = classifyPlan(
    planDocument({
      resource_changes: [
        resourceChange(INPUTS_HASH_ADDRESS, ['delete']),
        resourceChange('terraform_data.a', ['delete']),
        resourceChange(INPUTS_HASH_ADDRESS, ['delete'], { deposed: 'aaaa0000' }),
      ],
    }),
    { ignoreAddresses: new Set([INPUTS_HASH_ADDRESS]), destroyPlan: true },
  );
  assert.deepEqual(
    result.destructive.map((d) => [d.address, d.action, d.why]),
    [
      ['terraform_data.a', 'delete', undefined],
      [INPUTS_HASH_ADDRESS, 'delete', `${RESERVED}: deposed object aaaa0000`],
    ],
  );
  assert.equal(result.counts.delete, 2);
  // A create of the record is no destroy's doing.
  assert.ok(
    classifyPlan(planDocument({ resource_changes: [resourceChange(INPUTS_HASH_ADDRESS, ['create'])] }), {
      ignoreAddresses: new Set([INPUTS_HASH_ADDRESS]),
      destroyPlan: true,
    }).gated,
  );
});

test('a forget and an import of the same object (type, provider, id) are its move: the import is listed as moved from the forgotten address', () => {
  const forget = (address: string, id: string) =>
    resourceChange(address, ['forget'], { action_reason: 'delete_because_no_resource_config' }, { before: { id } });
  const imported = (address: string, id: string, type = 'terraform_data') => ({
    ...resourceChange(address, ['delete', 'create'], {}, { importing: { id }, before: { id } }),
    type,
  });
  const c = classify({
    resource_changes: [
      imported('terraform_data.archive', 'db-id'),
      forget('terraform_data.db', 'db-id'),
      // another id, or the same id under another type: no move
      imported('terraform_data.other', 'other-id'),
      imported('null_resource.db', 'db-id', 'null_resource'),
    ],
  });
  assert.deepEqual(
    c.destructive.map((d) => [d.address, d.previousAddress, d.action]),
    [
      ['terraform_data.archive', 'terraform_data.db', 'replace'],
      ['terraform_data.other', undefined, 'replace'],
      ['null_resource.db', undefined, 'replace'],
    ],
  );
  assert.equal(c.destructiveTotal, 3);
  assert.deepEqual(c.counts, counts({ replace: 3, forget: 1, import: 3 }));
});

describe('classifyPlan: one case per plan shape', () => {
  for (const c of cases) {
    test(c.name, () => {
      const result = classify(c.sections);
      assert.equal(result.gated, c.destructive);
      assert.equal(result.hasResourceChanges, c.hasResourceChanges);
      assert.deepEqual(result.counts, counts(c.counts));
      assert.deepEqual(result.failClosed, []);
      if (c.entries) {
        assert.equal(result.destructive.length, c.entries.length);
        c.entries.forEach((expected, i) => {
          for (const [field, value] of Object.entries(expected))
            assert.deepEqual(result.destructive[i]![field as keyof typeof expected], value, `${field} of entry ${i}`);
        });
      }
      assert.equal(result.destructiveTotal, result.destructive.length);
    });
  }

  test('outputs only: changes, but neither resource changes nor destructive', () => {
    const result = classify({
      resource_changes: [resourceChange('terraform_data.a', ['no-op'])],
      output_changes: {
        x: { actions: ['update'], before: 1, after: 2 },
        y: { actions: ['create'] },
        same: { actions: ['no-op'] },
      },
    });
    assert.equal(result.hasOutputChanges, true);
    assert.equal(result.hasResourceChanges, false);
    assert.equal(result.gated, false);
    assert.deepEqual(result.outputChanges, { create: 1, update: 1, delete: 0 });
  });

  test('an unknown output action fails closed', () => {
    const result = classify({ output_changes: { x: { actions: ['rename'] } } });
    assert.deepEqual(result.failClosed, ['output "x": unknown action "rename"']);
    assert.equal(result.gated, true);
  });

  test('errored plan (prevent_destroy): errored comes through with its entries', () => {
    const result = classify({
      errored: true,
      applyable: false,
      complete: false,
      resource_changes: [resourceChange('terraform_data.p', ['delete', 'create'])],
    });
    assert.equal(result.errored, true);
    assert.equal(result.applyable, false);
    assert.equal(result.complete, false);
    assert.equal(result.destructiveTotal, 1);
  });

  test('refresh-only plan: drift listed, no resource_changes', () => {
    const result = classify({
      resource_drift: [
        resourceChange('fake_thing.a', ['update']),
        resourceChange('fake_thing.b', ['delete'], { deposed: 'abcd1234' }),
      ],
    });
    assert.equal(result.driftTotal, 2);
    assert.deepEqual(result.drift, [
      { address: 'fake_thing.a', actions: ['update'] },
      { address: 'fake_thing.b', deposed: 'abcd1234', actions: ['delete'] },
    ]);
    assert.equal(result.hasResourceChanges, false);
    assert.equal(result.gated, false, 'drift itself destroys nothing');
  });

  test('refresh-only plan: a move (previous_address) is counted and listed with where it came from', () => {
    const result = classify({
      resource_drift: [
        resourceChange('fake_thing.b', ['no-op'], { previous_address: 'fake_thing.a' }),
        resourceChange('fake_thing.c', ['no-op'], { previous_address: 'fake_thing.c' }),
      ],
    });
    assert.equal(result.counts.move, 1);
    assert.deepEqual(result.drift, [
      { address: 'fake_thing.b', previousAddress: 'fake_thing.a', actions: ['no-op'] },
      { address: 'fake_thing.c', actions: ['no-op'] },
    ]);
    assert.equal(result.gated, false);
  });

  test('unknown major format_version fails closed; known majors do not', () => {
    assert.deepEqual(classify({ format_version: '2.0' }).failClosed, [
      'format_version "2.0" has major version 2; this runner reads 0.x and 1.x',
    ]);
    assert.equal(classify({ format_version: '2.0' }).gated, true);
    assert.deepEqual(classify({ format_version: 'one' }).failClosed, ['format_version "one" is not MAJOR.MINOR']);
    for (const version of ['0.1', '0.2', '1.0', '1.2', '1.99'])
      assert.deepEqual(classify({ format_version: version }).failClosed, [], version);
  });

  test('sections of the wrong type fail closed', () => {
    const result = classify({ resource_changes: { a: 1 }, output_changes: [] });
    assert.deepEqual(result.failClosed, [
      'resource_changes is an object, expected an array',
      'output_changes is an array, expected an object',
    ]);
  });

  test('header booleans: absent (format 0.x) gets defaults, a wrong type fails closed', () => {
    const old = classifyPlan({ format_version: '0.1', resource_changes: [resourceChange('a.b', ['create'])] });
    assert.deepEqual([old.errored, old.complete, old.applyable], [false, true, true]);
    const noChange = classifyPlan({ format_version: '0.1', resource_changes: [resourceChange('a.b', ['no-op'])] });
    assert.equal(noChange.applyable, false);
    const wrong = classifyPlan({ format_version: '1.2', errored: 'no' });
    assert.equal(wrong.errored, true);
    assert.deepEqual(wrong.failClosed, ['errored is a string, expected a boolean']);
  });

  test('missing format_version fails closed', () => {
    assert.deepEqual(classifyPlan({}).failClosed, ['format_version is missing']);
  });

  test('limit bounds the lists, totals count everything', () => {
    const many = Array.from({ length: 7 }, (_, i) => resourceChange(`terraform_data.d[${i}]`, ['delete']));
    const result = classifyPlan(planDocument({ resource_changes: many, resource_drift: many }), { limit: 3 });
    assert.equal(result.destructive.length, 3);
    assert.equal(result.destructiveTotal, 7);
    assert.equal(result.drift.length, 3);
    assert.equal(result.driftTotal, 7);
    assert.equal(classifyPlan(planDocument({ resource_changes: many }), { limit: 0 }).destructive.length, 0);
  });

  test('sensitive root variables are listed, sorted', () => {
    const result = classify({
      variables: { zeta: { sensitive: true }, alpha: { sensitive: true }, plain: { sensitive: false }, other: {} },
    });
    assert.deepEqual(result.sensitiveVariables, ['alpha', 'zeta']);
  });

  test('a document that is not an object is unreadable', () => {
    for (const document of [[], 'plan', null, 3]) {
      assert.throws(
        () => classifyPlan(document),
        (error: unknown) => error instanceof RunnerError && error.kind === 'plan' && error.reason === 'PlanUnreadable',
      );
    }
  });
});

/** An action_invocations entry as terraform 1.14+ writes it, config values (possibly secret) included. */
const invocation = (address: string, trigger: Record<string, unknown>) => ({
  address,
  type: address.split('.')[1]!,
  name: address.split('.')[2]!,
  config_values: { token: 'S3CRET-action-config' },
  config_sensitive: { token: true },
  config_unknown: {},
  provider_name: 'registry.terraform.io/hashicorp/aws',
  ...trigger,
});
const lifecycleTrigger = (resource: string, event: unknown, onFailure?: unknown) => ({
  lifecycle_action_trigger: {
    triggering_resource_address: resource,
    action_trigger_event: event,
    action_trigger_block_index: 0,
    actions_list_index: 0,
    ...(onFailure === undefined ? {} : { on_failure: onFailure }),
  },
});
const invokeTrigger = (calling?: string) => ({
  invoke_action_trigger: calling === undefined ? {} : { calling_resource_address: calling },
});

describe('provider actions (terraform 1.14+): every one needs an approval', () => {
  test('an invoked action on a plan that changes nothing else is gated, and listed without its config', () => {
    const result = classify({
      resource_changes: [resourceChange('terraform_data.a', ['no-op'])],
      action_invocations: [invocation('action.aws_ec2_stop_instance.m', invokeTrigger())],
    });
    assert.equal(result.gated, true);
    assert.equal(result.hasResourceChanges, false);
    assert.deepEqual(result.failClosed, []);
    assert.equal(result.actionsTotal, 1);
    assert.deepEqual(result.actions, [
      {
        address: 'action.aws_ec2_stop_instance.m',
        type: 'aws_ec2_stop_instance',
        provider: 'registry.terraform.io/hashicorp/aws',
        trigger: 'invoke',
        triggeringResource: null,
        onFailure: null,
        deferred: false,
        deferredReason: null,
      },
    ]);
    assert.ok(!JSON.stringify(result).includes('S3CRET'), 'config_values are never read');
  });

  test('each lifecycle event is its trigger; on_failure and the triggering or calling resource are read', () => {
    const events = ['BeforeCreate', 'AfterCreate', 'BeforeUpdate', 'AfterUpdate', 'BeforeDestroy', 'AfterDestroy'];
    const result = classify({
      action_invocations: [
        ...events.map((event, i) =>
          invocation(`action.aws_lambda_invoke.e${i}`, lifecycleTrigger('terraform_data.a', event)),
        ),
        invocation(
          'action.aws_lambda_invoke.halt',
          lifecycleTrigger('terraform_data.a', 'AfterUpdate', 'ActionOnFailureHalt'),
        ),
        invocation(
          'action.aws_lambda_invoke.taint',
          lifecycleTrigger('terraform_data.a', 'AfterUpdate', 'ActionOnFailureTaint'),
        ),
        invocation(
          'action.aws_lambda_invoke.continue',
          lifecycleTrigger('terraform_data.a', 'AfterUpdate', 'ActionOnFailureContinue'),
        ),
        invocation('action.aws_lambda_invoke.called', invokeTrigger('terraform_data.b')),
      ],
    });
    assert.deepEqual(result.failClosed, []);
    assert.deepEqual(
      result.actions.map((a) => a.trigger),
      [...events, 'AfterUpdate', 'AfterUpdate', 'AfterUpdate', 'invoke'],
    );
    assert.deepEqual(
      result.actions.map((a) => a.onFailure),
      [...events.map(() => null), 'halt', 'taint', 'continue', null],
    );
    assert.deepEqual(
      result.actions.map((a) => a.triggeringResource),
      [...Array(9).fill('terraform_data.a'), 'terraform_data.b'],
    );
  });

  test('deferred action invocations are listed as deferred with their reason', () => {
    const result = classify({
      deferred_action_invocations: [
        {
          reason: 'deferred_prereq',
          action_invocation: invocation(
            'action.aws_lambda_invoke.later',
            lifecycleTrigger('terraform_data.a', 'AfterCreate'),
          ),
        },
      ],
    });
    assert.equal(result.gated, true);
    assert.deepEqual(result.failClosed, []);
    assert.deepEqual(
      result.actions.map((a) => [a.address, a.deferred, a.deferredReason]),
      [['action.aws_lambda_invoke.later', true, 'deferred_prereq']],
    );
  });

  test('what the runner cannot read about an action fails closed, naming it', () => {
    const result = classify({
      action_invocations: [
        invocation('action.x.event', lifecycleTrigger('terraform_data.a', 'DuringLunch')),
        invocation('action.x.failure', lifecycleTrigger('terraform_data.a', 'AfterUpdate', 'ActionOnFailureRetry')),
        invocation('action.x.none', {}),
        invocation('action.x.both', { ...invokeTrigger(), ...lifecycleTrigger('terraform_data.a', 'AfterUpdate') }),
        'not an entry',
      ],
      deferred_action_invocations: [{ reason: 'unknown' }],
    });
    assert.deepEqual(
      result.actions.map((a) => [a.address, a.trigger, a.onFailure]),
      [
        ['action.x.event', 'unknown', null],
        ['action.x.failure', 'AfterUpdate', 'unknown'],
        ['action.x.none', 'unknown', null],
        ['action.x.both', 'unknown', null],
        ['action_invocations[4]', 'unknown', null],
        ['deferred_action_invocations[0]', 'unknown', null],
      ],
    );
    assert.deepEqual(result.failClosed, [
      'action_invocations[0] (action.x.event): unknown action_trigger_event DuringLunch',
      'action_invocations[1] (action.x.failure): unknown on_failure ActionOnFailureRetry',
      'action_invocations[2] (action.x.none): it has neither a lifecycle_action_trigger nor an invoke_action_trigger (or both)',
      'action_invocations[3] (action.x.both): it has neither a lifecycle_action_trigger nor an invoke_action_trigger (or both)',
      'action_invocations[4] (action_invocations[4]): it is a string, not an object',
      'deferred_action_invocations[0] (deferred_action_invocations[0]): it is null, not an object',
    ]);
  });

  test('limit bounds actions, actionsTotal counts them all, onAction is told every one', () => {
    const told: string[] = [];
    const many = Array.from({ length: 5 }, (_, i) => invocation(`action.x.a${i}`, invokeTrigger()));
    const result = classifyPlan(planDocument({ action_invocations: many }), {
      limit: 2,
      onAction: (a) => told.push(a.address),
    });
    assert.equal(result.actions.length, 2);
    assert.equal(result.actionsTotal, 5);
    assert.equal(told.length, 5);
  });

  test('action sections of the wrong type fail closed', () => {
    // In document order.
    assert.deepEqual(classify({ deferred_action_invocations: 'x', action_invocations: {} }).failClosed, [
      'deferred_action_invocations is a string, expected an array',
      'action_invocations is an object, expected an array',
    ]);
  });
});

describe('plan content the runner does not know', () => {
  test('an unknown top-level key holding content fails closed, naming the key; an empty one is ignored', () => {
    for (const value of [[1], { a: null }, 'text', '', 0, 1, true]) {
      const result = classify({ future_changes: value });
      assert.equal(result.gated, true, JSON.stringify(value));
      assert.deepEqual(result.failClosed, [
        'the plan has a top-level key this runner does not know, "future_changes", and it holds content: what applying it does cannot be checked',
      ]);
    }
    for (const value of [[], {}, null, false])
      assert.deepEqual(classify({ future_changes: value }).failClosed, [], JSON.stringify(value));
  });

  test('a document that is not a plan is gated: {} and a state document', () => {
    assert.equal(classifyPlan({}).gated, true);
    const state = classifyPlan({
      version: 4,
      terraform_version: '1.11.4',
      serial: 3,
      lineage: 'l',
      outputs: {},
      resources: [{ mode: 'managed' }],
      check_results: null,
    });
    assert.equal(state.gated, true);
    assert.deepEqual(
      state.failClosed.map((why) => /"([^"]+)"/.exec(why)?.[1] ?? why),
      ['format_version is missing', 'version', 'serial', 'lineage', 'resources'],
    );
  });

  test('every key terraform and OpenTofu write is known, content or not', () => {
    for (const key of [
      'variables',
      'planned_values',
      'prior_state',
      'relevant_attributes',
      'checks',
      'timestamp',
      'configuration',
    ]) {
      assert.deepEqual(classify({ [key]: { something: [1] } }).failClosed, [], key);
    }
  });

  test('deferred changes: listed in partial.deferred, never destructive; the plan fails closed', () => {
    const result = classify({
      complete: false,
      resource_changes: [resourceChange('terraform_data.a', ['create'])],
      deferred_changes: [
        {
          reason: 'resource_config_unknown',
          resource_change: resourceChange('terraform_data.b', ['delete', 'create']),
        },
        {
          reason: 'provider_config_unknown',
          resource_change: resourceChange('terraform_data.c', ['create', 'forget']),
        },
        { resource_change: {} },
      ],
    });
    assert.equal(result.gated, true);
    assert.equal(result.destructiveTotal, 0);
    assert.deepEqual(result.counts, counts({ create: 1 }));
    assert.deepEqual(result.partial, {
      complete: false,
      deferred: [
        { address: 'terraform_data.b', action: 'replace', reason: 'resource_config_unknown' },
        { address: 'terraform_data.c', action: 'create-forget', reason: 'provider_config_unknown' },
        { address: 'deferred_changes[2]', action: 'unknown', reason: null },
      ],
      deferredTotal: 3,
    });
    assert.deepEqual(result.failClosed, [
      'complete is false: terraform says applying this plan does not finish the configuration (deferred changes, or -target)',
      'deferred_changes lists 3 changes terraform could not plan yet (partial.deferred): the plan is incomplete',
    ]);
  });

  test('complete false alone is partial and gated; a complete plan has no partial; an empty deferred_changes is nothing', () => {
    const incomplete = classify({
      complete: false,
      resource_changes: [resourceChange('terraform_data.a', ['create'])],
    });
    assert.deepEqual(incomplete.partial, { complete: false, deferred: [], deferredTotal: 0 });
    assert.equal(incomplete.gated, true);
    const complete = classify({
      resource_changes: [resourceChange('terraform_data.a', ['create'])],
      deferred_changes: [],
    });
    assert.equal(complete.partial, undefined);
    assert.equal(complete.gated, false);
  });

  test('OpenTofu: no applyable, complete or deferred_changes classifies as before', () => {
    const {
      applyable: _a,
      complete: _c,
      ...tofu
    } = planDocument({
      resource_changes: [
        resourceChange('terraform_data.a', ['forget', 'create']),
        resourceChange('terraform_data.b', ['delete'], { action_reason: 'delete_because_enabled_false' }),
      ],
    });
    const result = classifyPlan(tofu, ignore);
    assert.deepEqual([result.complete, result.applyable, result.partial], [true, true, undefined]);
    assert.deepEqual(result.counts, counts({ create: 1, forget: 1, delete: 1 }));
    assert.deepEqual(
      result.destructive.map((d) => [d.address, d.action, d.reason]),
      [['terraform_data.b', 'delete', 'delete_because_enabled_false']],
    );
    assert.deepEqual(result.failClosed, []);
  });
});

describe('the terraform-json corpus', () => {
  const expectations: Record<string, (c: Classification) => void> = {
    'action_reason__plan.json': (c) => {
      assert.deepEqual(c.counts, counts({ replace: 1 }));
      assert.deepEqual(c.destructive, [
        {
          address: 'null_resource.example',
          action: 'replace',
          actions: ['delete', 'create'],
          reason: 'replace_because_tainted',
        },
      ]);
      assert.equal(c.terraformVersion, '1.15.0');
    },
    'moved_block__plan.json': (c) => {
      assert.deepEqual(c.counts, counts({ noop: 1, move: 1 }));
      assert.equal(c.hasResourceChanges, true);
      assert.equal(c.gated, false);
    },
    'identity__plan.json': (c) => assert.deepEqual(c.counts, counts({ update: 1, import: 1 })),
    'config_resource_depends_on__plan.json': (c) => {
      assert.deepEqual(c.counts, counts({ replace: 1, noop: 1 }));
      assert.equal(c.destructive[0]!.address, 'null_resource.bar');
    },
    'no_changes__plan.json': (c) => {
      assert.equal(c.hasResourceChanges, false);
      assert.equal(c.hasOutputChanges, true);
      assert.equal(c.gated, false);
    },
    'basic__plan-0.15.json': (c) => assert.deepEqual(c.sensitiveVariables, ['test_var']),
    'basic__plan.json': (c) => {
      assert.deepEqual(c.counts, counts({ read: 1, create: 7 }));
      assert.deepEqual(c.outputChanges, { create: 8, update: 0, delete: 0 });
      assert.equal(c.formatVersion, '0.1');
    },
    // terraform 1.14's -invoke: no resource changes, and still the plan runs a provider action.
    'actions__plan.json': (c) => {
      assert.equal(c.terraformVersion, undefined);
      assert.equal(c.hasResourceChanges, false);
      assert.equal(c.gated, true);
      assert.deepEqual(c.actions, [
        {
          address: 'action.bufo_print.success',
          type: 'bufo_print',
          provider: 'registry.terraform.io/austinvalle/bufo',
          trigger: 'invoke',
          triggeringResource: null,
          onFailure: null,
          deferred: false,
          deferredReason: null,
        },
      ]);
      assert.equal(c.actionsTotal, 1);
    },
    'has_checks__plan.json': (c) => assert.deepEqual(c.counts, counts({ create: 2 })),
  };

  for (const file of corpusFiles().filter((f) => f !== 'invalid__plan.json')) {
    test(file, () => {
      const result = Classification.parse(classifyPlan(JSON.parse(readFileSync(corpusPath(file), 'utf8'))));
      assert.deepEqual(result.failClosed, [], 'every corpus format version is known');
      expectations[file]?.(result);
    });
  }

  test('every expectation names a corpus file', () => {
    for (const file of Object.keys(expectations)) assert.ok(corpusFiles().includes(file), file);
  });
});
