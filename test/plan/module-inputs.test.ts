import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sensitiveModuleInputs } from '../../src/plan/module-inputs.ts';

describe('what a module call passes to sensitive variables', () => {
  it("the caller's variables a sensitive variable references, through a grandchild module, and constant strings", () => {
    const call = {
      expressions: {
        password: { references: ['var.db_password'] },
        name: { references: ['var.env'] },
        nested: { references: ['var.token.value', 'var.token'] },
        literal: { constant_value: 'Literal-Secret-1' },
      },
      module: {
        variables: { password: { sensitive: true }, name: {}, literal: { sensitive: true }, nested: {} },
        module_calls: {
          inner: {
            expressions: { key: { references: ['var.nested', 'local.x'] } },
            module: { variables: { key: { sensitive: true } } },
          },
        },
      },
    };
    assert.deepEqual(sensitiveModuleInputs(call), {
      variables: ['db_password', 'token'],
      constants: ['Literal-Secret-1'],
    });
  });

  it('a call without sensitive variables, or of an unexpected shape, passes none', () => {
    assert.deepEqual(
      sensitiveModuleInputs({ expressions: { a: { references: ['var.a'] } }, module: { variables: { a: {} } } }),
      {
        variables: [],
        constants: [],
      },
    );
    assert.deepEqual(sensitiveModuleInputs(null), { variables: [], constants: [] });
  });
});
