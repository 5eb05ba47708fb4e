// What the contract requires of a module's files, and the providers init looked for (pure).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { providersInInitOutput, REQUIRED_VARIABLES } from '../../../src/commands/contract-check/module-files.ts';

test('providersInInitOutput reads the providers init looked for', () => {
  const lines = [
    'Initializing provider plugins...',
    '- terraform.io/builtin/terraform is built in to Terraform',
    '- Finding latest version of hashicorp/null...',
    '- Finding example.com/acme/thing versions matching "~> 3.0"...',
    '- Finding latest version of hashicorp/null...',
    '- Installing hashicorp/null v3.2.0...',
  ];
  assert.deepEqual(providersInInitOutput(lines), ['example.com/acme/thing', 'hashicorp/null']);
});

test('required variables per kind', () => {
  assert.deepEqual(REQUIRED_VARIABLES, { cluster: [], machine: ['bootstrap_data'], pool: ['bootstrap_data', 'captf_cluster_outputs'] });
});
