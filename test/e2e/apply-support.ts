// Shared by the apply-*.test.ts files (the guarded apply end to end, one concern a file, so that
// they run concurrently): the base module applied once per file, and each test given a copy of
// that applied state in a scenario of its own.
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { cp } from 'node:fs/promises';
import { dirname } from 'node:path';
import { sharedSetup } from '../support/suite-setup.ts';
import { modules } from '../support/tf-modules.ts';
import { explain, scenario, type Scenario } from './runner.ts';

export const CANARY = 'CANARY-e2e-5ecret-Zq9';
export const IMAGE = 'registry.example/captf-module:1.0.0';
const BASE_INPUTS = { 'terraform.tfvars.json': { admin_token: CANARY } };

/** The state dir of a real apply of modules.base with BASE_INPUTS by the runner: made once per file. */
const appliedBase = sharedSetup(async (suite) => {
  const s = await scenario(suite, modules.base, BASE_INPUTS);
  const first = await s.run('apply', ['--image', IMAGE]);
  assert.equal(first.exitCode, 0, explain(first));
  return dirname(s.state);
});

/**
 * A scenario whose base module is applied already. Applying it is the same for every test, so the
 * file applies it once and each test starts from a copy of that state (terraform's own, with its
 * lineage and serial), in a dir of its own: what a test changes no other test sees.
 */
export async function applied(t: TestContext): Promise<Scenario> {
  const s = await scenario(t, modules.base, BASE_INPUTS);
  await cp(await appliedBase(), dirname(s.state), { recursive: true });
  return s;
}

export function assertNoCanary(run: { allBytes: string }) {
  assert.ok(!run.allBytes.includes(CANARY), 'the sensitive value appears in something the runner wrote');
}
