import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { addressParts } from '../../src/plan/address.ts';

describe('the parts of a resource instance address (where a moved entry was)', () => {
  it('reads the module path, the mode, the type and the name', () => {
    assert.deepEqual(addressParts('terraform_data.db'), {
      module: '',
      mode: 'managed',
      type: 'terraform_data',
      name: 'db',
    });
    assert.deepEqual(addressParts('module.wrap.terraform_data.store'), {
      module: 'module.wrap',
      mode: 'managed',
      type: 'terraform_data',
      name: 'store',
    });
    assert.deepEqual(addressParts('module.a["x"].module.b[0].aws_db_instance.main[3]'), {
      module: 'module.a["x"].module.b[0]',
      mode: 'managed',
      type: 'aws_db_instance',
      name: 'main',
    });
    assert.deepEqual(addressParts('module.a.data.aws_ami.ubuntu'), {
      module: 'module.a',
      mode: 'data',
      type: 'aws_ami',
      name: 'ubuntu',
    });
  });

  it('keeps a quoted key whole, with its dots, brackets and escaped quotes', () => {
    assert.deepEqual(addressParts('module.db["eu.west-1] \\"x\\""].terraform_data.db["a.b"]'), {
      module: 'module.db["eu.west-1] \\"x\\""]',
      mode: 'managed',
      type: 'terraform_data',
      name: 'db',
    });
  });

  it('gives nothing for what is no resource instance address', () => {
    for (const address of [
      '',
      'terraform_data',
      'module.a',
      'terraform_data.db.extra',
      'terraform_data[0].db',
      'module.a["x].t.n',
      'a..b',
      't.n[x]',
    ]) {
      assert.equal(addressParts(address), undefined, address);
    }
  });
});
