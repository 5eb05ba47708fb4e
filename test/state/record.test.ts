import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { recordChanged, setBackEntry, withRecordSetBack, type RecordEntry } from '../../src/state/record.ts';

const PROVIDER = 'provider["terraform.io/builtin/terraform"]';
const record = (value: string | null, dependencies: string[], id = 'rec-id'): RecordEntry => ({
  mode: 'managed',
  type: 'terraform_data',
  name: 'captf_inputs_hash',
  provider: PROVIDER,
  instances: [
    {
      schema_version: 0,
      attributes: {
        id,
        input: value === null ? null : { value, type: 'string' },
        output: value === null ? null : { value, type: 'string' },
        triggers_replace: null,
      },
      sensitive_attributes: [],
      dependencies,
    },
  ],
});
const OLD = 'a'.repeat(64);
const NEW = 'b'.repeat(64);
// A resource whose attribute no JavaScript number holds exactly, and one in a child module named like the record.
const BIG =
  '{\n      "mode": "managed",\n      "type": "terraform_data",\n      "name": "big",\n      "provider": "provider[\\"terraform.io/builtin/terraform\\"]",\n      "instances": [{"attributes": {"id": "x", "input": {"value": 123456789012345678901234567890, "type": "number"}}}]\n    }';
const IN_MODULE = JSON.stringify({ ...record(NEW, []), module: 'module.m' });
const stateText = (resources: string[]) =>
  `{\n  "version": 4,\n  "terraform_version": "1.11.4",\n  "serial": 6,\n  "lineage": "l",\n  "outputs": {},\n  "resources": [\n    ${resources.join(',\n    ')}\n  ],\n  "check_results": null\n}\n`;
const parsedResources = (text: string) => (JSON.parse(text) as { resources: RecordEntry[] }).resources;

describe('state: the record set back', () => {
  it('sets back the value terraform wrote early, every other byte as it was', () => {
    const after = stateText([BIG, JSON.stringify(record(NEW, ['terraform_data.keep'])), IN_MODULE]);
    const text = withRecordSetBack(after, record(OLD, ['terraform_data.keep', 'terraform_data.old'], 'old-id'));
    const [big, rec, inModule] = parsedResources(text);
    assert.deepEqual(
      rec,
      record(OLD, ['terraform_data.keep', 'terraform_data.old']),
      'the old value, the id terraform left, both sets of dependencies',
    );
    assert.equal(JSON.stringify(inModule), IN_MODULE, 'a resource of that name in a child module is not the record');
    assert.ok(text.includes('123456789012345678901234567890'), 'the big number is kept as written');
    assert.equal(text.replace(JSON.stringify(rec), JSON.stringify(record(NEW, ['terraform_data.keep']))), after);
    assert.equal(big!.name, 'big');
  });

  it('puts back a record terraform deleted (a destroy deletes it first), and nulls one there was none of', () => {
    const deleted = withRecordSetBack(stateText([BIG]), record(OLD, ['terraform_data.big']));
    assert.deepEqual(parsedResources(deleted)[0], record(OLD, ['terraform_data.big']));
    assert.equal(parsedResources(deleted).length, 2);
    const empty = withRecordSetBack(stateText([]).replace(/\[\s*\]/, '[]'), record(OLD, []));
    assert.deepEqual(parsedResources(empty), [record(OLD, [])]);
    const created = withRecordSetBack(stateText([JSON.stringify(record(NEW, ['terraform_data.big']))]), undefined);
    assert.deepEqual(parsedResources(created), [record(null, ['terraform_data.big'])]);
  });

  it('compares what the record says, not its dependencies or id', () => {
    assert.equal(recordChanged(record(OLD, ['a']), record(OLD, ['b'], 'other')), false);
    assert.equal(recordChanged(record(OLD, []), record(NEW, [])), true);
    assert.equal(recordChanged(record(OLD, []), undefined), true);
    assert.equal(recordChanged(undefined, record(null, [])), false, 'a null value is no record');
    assert.equal(setBackEntry(undefined, undefined), undefined);
  });

  it('refuses a document that is not a state', () => {
    assert.throws(() => withRecordSetBack('{"version":4}', undefined), /resources/);
    assert.throws(() => withRecordSetBack('{"resources":[{"mode":"managed"', undefined), SyntaxError);
  });
});
