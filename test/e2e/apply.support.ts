// Shared by the apply-*.test.ts files (the guarded apply end to end, one concern a file, so that
// they run concurrently): the base module applied once per file, and each test given a copy of
// that applied state in a scenario of its own.
import assert from 'node:assert/strict';
import { modules } from '../support/tf-modules.ts';
import { firstApplyOnce } from './first-apply.support.ts';

export const CANARY = 'CANARY-e2e-5ecret-Zq9';
export const IMAGE = 'registry.example/captf-module:1.0.0';
const BASE_INPUTS = { 'terraform.tfvars.json': { admin_token: CANARY } };

/**
 * A scenario whose base module is applied already. Applying it is the same for every test, so the
 * file applies it once (a real apply of modules.base with BASE_INPUTS by the runner) and each test
 * starts from a copy of that state (`applied`; `baseApplied.first()` is that apply itself, for the test of it) (terraform's own, with its lineage and serial), in a dir of its
 * own: what a test changes no other test sees.
 */
export const baseApplied = firstApplyOnce(modules.base, BASE_INPUTS, ['--image', IMAGE]);
export const { applied } = baseApplied;

export function assertNoCanary(run: { allBytes: string }) {
  assert.ok(!run.allBytes.includes(CANARY), 'the sensitive value appears in something the runner wrote');
}
