// observers(): the one way the run's observers of a plan's reading (log, masker, policy, approval coverage) are combined.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { classifyPlan } from '../../src/plan/classify.ts';
import { observers, type PlanObserver } from '../../src/plan/observer.ts';
import { classifyPlanStream } from '../../src/plan/stream.ts';
import { chunked, planDocument, resourceChange } from './plans.support.ts';

/** An observer that writes each hook it is told into `told`, prefixed with its name. */
function recording(name: string, told: string[]): PlanObserver {
  return {
    onRootDeclaration: (address) => void told.push(`${name} declared ${address}`),
    onDestructive: (entry) => void told.push(`${name} destructive ${entry.address}`),
    onAction: (action) => void told.push(`${name} action ${action.address}`),
    onChange: (change) => void told.push(`${name} change ${change.address}`),
    onChangedValues: (before, after) => void told.push(`${name} values ${JSON.stringify([before, after])}`),
    onModuleCall: () => void told.push(`${name} module call`),
    pace: async () => void told.push(`${name} pace`),
  };
}

const DOCUMENT = {
  ...planDocument({
    resource_changes: [resourceChange('terraform_data.a', ['delete']), resourceChange('terraform_data.b', ['create'])],
    action_invocations: [
      {
        address: 'action.local_command.notify',
        type: 'local_command',
        provider_name: 'registry.terraform.io/hashicorp/local',
        invoke_action_trigger: {},
      },
    ],
  }),
  configuration: { root_module: { resources: [{ address: 'terraform_data.a', mode: 'managed' }] } },
};

describe('observers', () => {
  test('tells each observer every hook it has, in the order given, skipping absent ones', () => {
    const told: string[] = [];
    const onlyActions: PlanObserver = { onAction: (action) => void told.push(`actions ${action.address}`) };
    classifyPlan(DOCUMENT, observers(recording('first', told), undefined, onlyActions, recording('last', told)));
    assert.deepEqual(told, [
      'first change terraform_data.a',
      'last change terraform_data.a',
      'first destructive terraform_data.a',
      'last destructive terraform_data.a',
      'first change terraform_data.b',
      'last change terraform_data.b',
      'first action action.local_command.notify',
      'actions action.local_command.notify',
      'last action action.local_command.notify',
      'first declared terraform_data.a',
      'last declared terraform_data.a',
    ]);
  });

  test('a hook none has stays absent; one only one observer has is its own function', () => {
    const onChange = () => {};
    const pace = async () => {};
    const combined = observers({ onChange }, { pace }, undefined, {});
    assert.deepEqual(Object.keys(combined).sort(), ['onChange', 'pace']);
    assert.equal(combined.onChange, onChange);
    assert.equal(combined.pace, pace);
    assert.deepEqual(observers(), {});
  });

  test('the streaming reader tells changed values and module calls to each, and awaits each pace in turn', async () => {
    const told: string[] = [];
    // Were the paces awaited together, the second would start before the first is done.
    const slow: PlanObserver = {
      pace: () =>
        new Promise<void>((resolve) => {
          told.push('slow pace started');
          setImmediate(() => {
            told.push('slow pace done');
            resolve();
          });
        }),
    };
    const document = {
      ...planDocument({
        resource_changes: [
          { ...resourceChange('terraform_data.a', ['update']), change: { actions: ['update'], before: 1, after: 2 } },
        ],
      }),
      configuration: { root_module: { module_calls: { net: { source: './net' } } } },
    };
    await classifyPlanStream(
      chunked(Buffer.from(JSON.stringify(document)), []),
      observers(slow, recording('second', told)),
    );
    assert.deepEqual(told, [
      'second values [1,2]',
      'second change terraform_data.a',
      'second declared module.net',
      'second module call',
      'slow pace started',
      'slow pace done',
      'second pace',
    ]);
  });
});
