// The action helpers: what terraform's action lists mean, which kinds destroy, and their names in words.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { actionText, changeText, countedAs, isDestructive, kindName, readActions } from '../../src/plan/actions.ts';
import { COUNTED_KINDS, DESTRUCTIVE_KINDS, type ActionKind } from '../../src/vocabulary/action-kinds.ts';

describe('readActions', () => {
  test('only the documented lists are known', () => {
    assert.equal(readActions(['delete', 'create']).kind, 'replace');
    assert.equal(readActions(['create', 'delete']).kind, 'replace');
    assert.equal(readActions([]).kind, 'unknown');
    assert.equal(readActions(['create', 'forget']).kind, 'createForget');
    assert.equal(readActions(['forget', 'create']).kind, 'createForget');
    assert.equal(readActions(['delete', 'forget']).kind, 'unknown');
    assert.equal(readActions(['forget', 'forget']).kind, 'unknown');
    assert.equal(readActions(['delete', 'delete']).kind, 'unknown');
    assert.equal(readActions('delete').kind, 'unknown');
  });
});

describe('isDestructive', () => {
  const every: ActionKind[] = [...COUNTED_KINDS, 'createForget'];

  test('a delete, a replace and what the runner cannot read destroy; forget (with or without a create) does not', () => {
    assert.deepEqual(every.filter(isDestructive), ['delete', 'replace', 'unknown']);
    assert.deepEqual(every.filter(isDestructive), [...DESTRUCTIVE_KINDS]);
  });

  test('a kind this runner does not know counts as destructive', () => {
    for (const kind of ['frobnicate', '', 'constructor', 'toString']) assert.equal(isDestructive(kind), true, kind);
  });
});

describe('counting and naming kinds', () => {
  test('a create-forget counts as a create and a forget, and is named create-forget', () => {
    assert.deepEqual(countedAs('createForget'), ['create', 'forget']);
    assert.deepEqual(countedAs('replace'), ['replace']);
    assert.equal(kindName('createForget'), 'create-forget');
    assert.equal(kindName('noop'), 'noop');
  });

  test('a destructive entry and a provider action in words', () => {
    assert.equal(changeText({ address: 'terraform_data.a', action: 'delete' }), 'terraform_data.a (delete)');
    assert.equal(
      changeText({ address: 'terraform_data.a', deposed: '00000001', action: 'replace' }),
      'terraform_data.a (deposed 00000001) (replace)',
    );
    assert.equal(actionText({ address: 'action.x.y', trigger: 'invoke' }), 'action.x.y (action invoke)');
  });
});
