// What the contract requires of a module's files (pure). The providers init looked for: test/terraform/diagnostics.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { REQUIRED_VARIABLES } from '../../../src/commands/contract-check/module-files.ts';

test('required variables per kind', () => {
  assert.deepEqual(REQUIRED_VARIABLES, {
    cluster: [],
    machine: ['bootstrap_data'],
    pool: ['bootstrap_data', 'captf_cluster_outputs'],
  });
});
