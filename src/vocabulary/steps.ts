// The names of the steps a run records (result.steps[].name, error.step), in one list: RunContext.step
// takes only these, the result schema's step names are this enum, and contract/sections/reasons.md
// lists them (scripts/generators/gen-vocabulary.ts). Pure data: it imports nothing.
import type { Op } from './reasons.ts';

export interface StepRow {
  readonly ops: readonly Op[];
  readonly meaning: string;
}

export const STEPS = {
  policy: { ops: ['apply', 'plan', 'drift'], meaning: 'the policy dir loaded and compiled (only when there is one)' },
  preflight: {
    ops: ['apply', 'plan', 'refresh', 'drift', 'destroy', 'restore', 'unlock'],
    meaning: 'the cheap part of the image contract: terraform version, the module scan, the run locations',
  },
  inputs: { ops: ['apply', 'plan', 'refresh', 'drift', 'destroy'], meaning: 'the inputs read and hashed' },
  workspace: {
    ops: ['apply', 'plan', 'refresh', 'drift', 'destroy', 'restore', 'unlock'],
    meaning: 'the workdir: the module copied (restore, unlock: the backend only), the runner files added',
  },
  'lock info': { ops: ['unlock'], meaning: "local backend: the lock's id and holder read; another id stops here" },
  'read backup': { ops: ['restore'], meaning: 'the backup read and verified against its manifest, before init' },
  artifact: {
    ops: ['apply', 'plan'],
    meaning:
      'plan: the plan artifact written and verified; apply --plan-artifact: the approved artifact read and verified',
  },
  init: {
    ops: ['apply', 'plan', 'refresh', 'drift', 'destroy', 'restore', 'unlock'],
    meaning: 'terraform init, and the backend it configured checked',
  },
  validate: { ops: ['apply', 'plan', 'refresh', 'drift', 'destroy'], meaning: 'terraform validate' },
  'backup store': {
    ops: ['apply', 'plan'],
    meaning:
      "a guarded apply's and a plan's look at the object's backup store before the plan: an errored state a previous run kept, the markers of killed applies (the other ops look beside the state pull, in state before)",
  },
  'state before': {
    ops: ['apply', 'plan', 'refresh', 'drift', 'destroy', 'restore'],
    meaning:
      'the state before the op (terraform state pull; a guarded apply and a plan read it from the saved plan, and a guarded apply pulls the state it replaces once it applies)',
  },
  'errored state': {
    ops: ['apply', 'plan', 'refresh', 'drift', 'destroy'],
    meaning:
      "an errored.tfstate a previous run of the object kept in the store: read and checked against the backend's state (only when the store holds one)",
  },
  'artifact binding': {
    ops: ['apply'],
    meaning: 'apply --plan-artifact: the artifact was planned against this backend and this state',
  },
  plan: {
    ops: ['apply', 'plan', 'refresh', 'drift', 'destroy'],
    meaning: 'terraform plan -out (refresh-only, -destroy as the op asks)',
  },
  'plan hash': {
    ops: ['apply', 'plan', 'refresh', 'drift', 'destroy'],
    meaning: 'the saved plan file hashed and held open',
  },
  show: {
    ops: ['apply', 'plan', 'refresh', 'drift', 'destroy'],
    meaning: 'terraform show -json, classified (and judged by the policy) as it streams',
  },
  decide: {
    ops: ['apply', 'plan', 'refresh', 'restore'],
    meaning:
      'the verdict on what was learned: a policy denial (apply, plan), the guard (apply), a gated refresh-only plan (refresh), another lineage (restore)',
  },
  approval: {
    ops: ['apply'],
    meaning: 'an approval was required and matched: what it covered that the blocked run did not show',
  },
  backup: {
    ops: ['apply', 'plan', 'refresh', 'drift', 'destroy', 'restore'],
    meaning:
      'the state backed up before anything changes it (skipped when there is no state); in every op that plans, before a kept errored state is pushed over it',
  },
  'plan check': {
    ops: ['apply', 'refresh', 'destroy'],
    meaning: 'the saved plan still has the hash taken before show',
  },
  apply: { ops: ['apply', 'refresh', 'destroy'], meaning: 'terraform apply of the saved plan' },
  'state push': {
    ops: ['apply', 'plan', 'refresh', 'drift', 'destroy', 'restore'],
    meaning:
      "terraform state push: restore's backup, an errored.tfstate after a failed apply, or one a previous run kept (before anything plans)",
  },
  'state push (lineage)': {
    ops: ['restore'],
    meaning: "a second, forced push that brings back the backup's lineage into a backend that had no state",
  },
  'state after': {
    ops: ['apply', 'refresh', 'destroy', 'restore'],
    meaning: 'the state after the op, and the outputs read from it',
  },
  'record set back': {
    ops: ['apply', 'refresh', 'destroy'],
    meaning: "after an apply that did not succeed: the runner's record as it was before the op",
  },
  verify: { ops: ['restore'], meaning: 'the backend holds the backed-up state' },
  'force-unlock': {
    ops: ['unlock'],
    meaning: 'the lock released: taken and let go (local), or terraform force-unlock',
  },
} as const satisfies Record<string, StepRow>;

export type StepName = keyof typeof STEPS;
export const STEP_NAMES = Object.keys(STEPS) as StepName[];
