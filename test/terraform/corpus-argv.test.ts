// The captured corpus and the driver cannot drift apart: every case was captured with exactly the
// argv the runner's builders make today. A builder that changes (a flag added, an order changed)
// fails here until its cases are captured again (npx tsx scripts/generators/capture-terraform-output.ts --case NAME).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyArgs } from '../../src/terraform/apply.ts';
import { initArgs } from '../../src/terraform/init.ts';
import { forceUnlockArgs, lockProbeArgs } from '../../src/terraform/lock.ts';
import { planArgs } from '../../src/terraform/plan.ts';
import { statePullArgs, statePushArgs } from '../../src/terraform/state.ts';
import { validateArgs } from '../../src/terraform/validate.ts';
import { capturedCases, capturedCommand, capturedOutput } from '../support/terraform-output.ts';

/** The values of `-name=value` flags, in order. */
const values = (argv: readonly string[], name: string) =>
  argv.filter((arg) => arg.startsWith(`${name}=`)).map((arg) => arg.slice(name.length + 1));
const one = (argv: readonly string[], name: string) => values(argv, name)[0];
/** The last argument: the plan file, state file or lock id. */
const last = (argv: readonly string[]) => argv.at(-1)!;

/**
 * What the runner's builder makes from the options a captured argv names. Options are read
 * loosely; it is the builder's argv, compared whole, that must equal the captured one.
 */
const BUILT: Record<string, (argv: readonly string[]) => string[]> = {
  init: (argv) =>
    initArgs({
      ...(argv.includes('-backend=false') ? { backend: false } : {}),
      lockfileReadonly: argv.includes('-lockfile=readonly'),
      backendConfigs: values(argv, '-backend-config'),
    }),
  // The runner's validate is the -json form; the corpus also holds the text form beside it.
  validate: () => validateArgs(),
  plan: (argv) =>
    planArgs({
      out: one(argv, '-out')!,
      lockTimeout: one(argv, '-lock-timeout'),
      destroy: argv.includes('-destroy'),
      refreshOnly: argv.includes('-refresh-only'),
      varFiles: values(argv, '-var-file'),
    }),
  apply: (argv) => applyArgs({ planFile: last(argv), lockTimeout: one(argv, '-lock-timeout') }),
  'state pull': () => statePullArgs(),
  'state push': (argv) =>
    statePushArgs(last(argv), { force: argv.includes('-force'), lockTimeout: one(argv, '-lock-timeout') }),
  'state rm': () => lockProbeArgs(),
  'force-unlock': (argv) => forceUnlockArgs(last(argv)),
};

describe('the corpus was captured with the argv the driver builds', () => {
  for (const name of capturedCases()) {
    it(name, () => {
      const output = capturedOutput(name);
      const command = capturedCommand(output.argv);
      const build = BUILT[command];
      assert.ok(build, `${name}: no builder for "${command}": add it to BUILT`);
      if (command === 'validate') {
        // The text form is validate's own argv without -json, for people; the -json form is the runner's.
        assert.deepEqual(output.json?.argv, build(output.json!.argv), name);
        assert.deepEqual(
          output.argv,
          validateArgs().filter((arg) => arg !== '-json'),
          name,
        );
      } else {
        assert.deepEqual(output.argv, build(output.argv), name);
      }
      if (command === 'plan') {
        // The -json form: the runner's plan with -json after -no-color (its own plan file).
        const runners = build(output.json!.argv);
        assert.deepEqual(output.json!.argv, [...runners.slice(0, 3), '-json', ...runners.slice(3)], `${name} (-json)`);
      }
    });
  }

  it('as the runner runs them, no captured output holds a colour escape', () => {
    for (const name of capturedCases()) {
      const output = capturedOutput(name);
      for (const text of [output.stdout, output.stderr, output.json?.stdout ?? '', output.json?.stderr ?? ''])
        assert.doesNotMatch(text, /\x1b\[/, name);
    }
  });
});
