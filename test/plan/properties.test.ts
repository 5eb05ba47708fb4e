// Properties over generated plans: the destructive rule against an independent oracle, and the
// streaming reader against the reference under any chunking and formatting.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { classifyPlan } from '../../src/plan/classify.ts';
import { classifyPlanStream } from '../../src/plan/stream.ts';
import { runs } from '../support/property-runs.ts';
import { chunked, INPUTS_HASH_ADDRESS } from './plans.support.ts';

const ignore = { ignoreAddresses: new Set([INPUTS_HASH_ADDRESS]) };

const knownActionLists = [
  ['no-op'],
  ['create'],
  ['read'],
  ['update'],
  ['delete'],
  ['forget'],
  ['delete', 'create'],
  ['create', 'delete'],
  ['create', 'forget'],
  ['forget', 'create'],
];

/** Actions as terraform writes them, plus the shapes the classifier must fail closed on. */
const actionsArbitrary: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...knownActionLists) },
  {
    weight: 1,
    arbitrary: fc.array(fc.constantFrom('create', 'delete', 'forget', 'read', 'update', 'no-op', 'open', 'Delete'), {
      maxLength: 3,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.oneof(
      fc.constant(undefined),
      fc.constant(null),
      fc.string(),
      fc.array(fc.oneof(fc.string(), fc.integer()), { maxLength: 2 }),
    ),
  },
);

/** The reserved address, its instances and a same-named resource of another module (not reserved). */
const reservedAddresses = [
  INPUTS_HASH_ADDRESS,
  `${INPUTS_HASH_ADDRESS}[0]`,
  `${INPUTS_HASH_ADDRESS}["a"]`,
  `module.m.${INPUTS_HASH_ADDRESS}`,
];

const addressArbitrary = fc.oneof(
  fc.constantFrom(
    ...reservedAddresses,
    'terraform_data.a',
    'terraform_data.cluster',
    'module.m["k"].terraform_data.b[0]',
    'data.x.y',
  ),
  fc.string({ unit: 'binary' }).map((s) => `terraform_data.${s}`),
);

/** Attribute values: any JSON, including escapes, unicode and deep nesting, that the reader must skip. */
const valuesArbitrary = fc.jsonValue({ maxDepth: 3 });

const entryArbitrary = fc.record(
  {
    address: addressArbitrary,
    mode: fc.constantFrom('managed', 'data'),
    deposed: fc.stringMatching(/^[0-9a-f]{8}$/),
    previous_address: addressArbitrary,
    action_reason: fc.constantFrom(
      'replace_because_cannot_update',
      'delete_because_count_index',
      'delete_because_no_resource_config',
    ),
    change: fc.record(
      {
        actions: actionsArbitrary,
        before: valuesArbitrary,
        after: valuesArbitrary,
        after_unknown: valuesArbitrary,
        importing: fc.oneof(fc.record({ id: fc.string() }), fc.constant(null)),
        replace_paths: fc.array(fc.array(fc.oneof(fc.string(), fc.nat()), { maxLength: 2 }), { maxLength: 2 }),
      },
      { requiredKeys: ['before'] },
    ),
  },
  { requiredKeys: ['address'] },
);

const planArbitrary = fc.record(
  {
    format_version: fc.oneof(
      { weight: 9, arbitrary: fc.constantFrom('0.1', '1.0', '1.2') },
      { weight: 1, arbitrary: fc.constantFrom('2.0', 'x', '') },
    ),
    terraform_version: fc.constant('1.11.4'),
    variables: fc.dictionary(fc.string(), fc.record({ value: valuesArbitrary })),
    planned_values: valuesArbitrary,
    resource_drift: fc.array(entryArbitrary, { maxLength: 3 }),
    resource_changes: fc.array(entryArbitrary, { maxLength: 6 }),
    output_changes: fc.dictionary(fc.string(), fc.record({ actions: actionsArbitrary, before: valuesArbitrary })),
    prior_state: valuesArbitrary,
    configuration: fc.record({
      root_module: fc.record({
        variables: fc.dictionary(
          fc.string(),
          fc.record({ sensitive: fc.boolean(), default: valuesArbitrary }, { requiredKeys: [] }),
        ),
      }),
    }),
    applyable: fc.boolean(),
    complete: fc.boolean(),
    errored: fc.boolean(),
  },
  { requiredKeys: ['format_version', 'resource_changes'] },
);

interface GeneratedEntry {
  address: string;
  previous_address?: string;
  deposed?: string;
  change?: { actions?: unknown; importing?: unknown };
}
type GeneratedPlan = { resource_changes: GeneratedEntry[]; resource_drift?: GeneratedEntry[] };

/** The runner's own create, update or no-op of its record: neither moved, imported nor deposed. The classifier skips it. */
const isRunnersOwn = ({ address, previous_address, deposed, change }: GeneratedEntry) =>
  address === INPUTS_HASH_ADDRESS &&
  ['["create"]', '["update"]', '["no-op"]'].includes(JSON.stringify(change?.actions)) &&
  (previous_address === undefined || previous_address === address) &&
  (change?.importing === undefined || change.importing === null) &&
  deposed === undefined;

const RESERVED = /^terraform_data\.captf_inputs_hash(\[|$)/;
const touchesReserved = ({ address, previous_address }: GeneratedEntry) =>
  RESERVED.test(address) || RESERVED.test(previous_address ?? '');

/** A drift entry of the record that is neither moved, imported nor deposed: its value changed outside terraform, whatever the actions. */
const isRecordsOwnDrift = ({ address, previous_address, deposed, change }: GeneratedEntry) =>
  address === INPUTS_HASH_ADDRESS &&
  (previous_address === undefined || previous_address === address) &&
  (change?.importing === undefined || change.importing === null) &&
  deposed === undefined;

/** Drift entries that move into or out of the record, or are an instance, import or deposed object of it: applying a refresh-only plan carries them out. */
const reservedDrift = (plan: GeneratedPlan) =>
  (plan.resource_drift ?? []).filter((entry) => touchesReserved(entry) && !isRecordsOwnDrift(entry));

/** The destructive rule, restated independently of the classifier. */
function oracleSaysDestructive(plan: GeneratedPlan): boolean {
  if (reservedDrift(plan).length > 0) return true;
  return plan.resource_changes.some((entry) => {
    if (isRunnersOwn(entry)) return false;
    if (touchesReserved(entry)) return true;
    const actions = entry.change?.actions;
    const known = knownActionLists.some((list) => JSON.stringify(list) === JSON.stringify(actions));
    return !known || (actions as string[]).includes('delete');
  });
}

/** Action lists holding "delete" anywhere: alone, first, last or among others, known actions or not. */
const deletingActionsArbitrary = fc
  .tuple(
    fc.array(fc.oneof(fc.constantFrom('create', 'delete', 'forget', 'read', 'update', 'no-op'), fc.string()), {
      maxLength: 3,
    }),
    fc.nat(),
  )
  .map(([others, at]) => others.toSpliced(at % (others.length + 1), 0, 'delete'));

/** A generated plan with one more entry, anywhere, whose actions include "delete"; often at a reserved address. */
const deletingPlanArbitrary = fc
  .tuple(
    planArbitrary,
    entryArbitrary,
    fc.oneof(fc.constantFrom(...reservedAddresses), addressArbitrary),
    deletingActionsArbitrary,
    fc.nat(),
  )
  .map(([plan, entry, address, actions, at]) => {
    const position = at % (plan.resource_changes.length + 1);
    const deleting = { ...entry, address, change: { ...entry.change, actions } };
    return {
      ...plan,
      resource_changes: [
        ...plan.resource_changes.slice(0, position),
        deleting,
        ...plan.resource_changes.slice(position),
      ],
    };
  });

describe('generated plans', () => {
  test('destructive ⇔ a counted entry deletes or has unknown actions, or the classifier failed closed', () => {
    fc.assert(
      fc.property(planArbitrary, (generated) => {
        const plan = JSON.parse(JSON.stringify(generated)) as GeneratedPlan;
        const result = classifyPlan(plan, ignore);
        assert.equal(result.gated, oracleSaysDestructive(plan) || result.failClosed.length > 0);
        assert.equal(result.destructiveTotal > 0, oracleSaysDestructive(plan));
        const reservedEntries =
          plan.resource_changes.filter((entry) => !isRunnersOwn(entry) && touchesReserved(entry)).length +
          reservedDrift(plan).length;
        assert.equal(
          result.destructive.filter((entry) => entry.why?.includes(`${INPUTS_HASH_ADDRESS} is reserved`)).length,
          reservedEntries,
        );
        const counted = Object.entries(result.counts).filter(([kind]) => kind !== 'import' && kind !== 'move');
        const nonIgnored = plan.resource_changes.filter((entry) => !isRunnersOwn(entry));
        // A create-and-forget counts as both, like terraform's summary; every other entry has exactly one kind.
        const createForgets = nonIgnored.filter(({ change }) =>
          ['["create","forget"]', '["forget","create"]'].includes(JSON.stringify(change?.actions)),
        ).length;
        assert.equal(
          counted.reduce((sum, [, n]) => sum + n, 0),
          nonIgnored.length + createForgets + reservedDrift(plan).length,
          'every counted entry has exactly one kind',
        );
      }),
      { numRuns: runs(100) },
    );
  });

  test('a plan with "delete" in any entry\'s actions, at any address (reserved ones too), is destructive to both readers', async () => {
    await fc.assert(
      fc.asyncProperty(deletingPlanArbitrary, fc.array(fc.nat(), { maxLength: 4 }), async (plan, cuts) => {
        const bytes = Buffer.from(JSON.stringify(plan));
        assert.ok(classifyPlan(JSON.parse(bytes.toString('utf8')), ignore).gated);
        assert.ok(
          (
            await classifyPlanStream(
              chunked(
                bytes,
                cuts.map((cut) => cut % (bytes.length + 1)),
              ),
              ignore,
            )
          ).gated,
        );
      }),
      { numRuns: runs(200) },
    );
  });

  test('in a destroy plan only the record\'s plain ["delete"] is the runner\'s own: every other delete stays destructive', () => {
    fc.assert(
      fc.property(deletingPlanArbitrary, (plan) => {
        const withoutOwnDelete = {
          ...plan,
          resource_changes: plan.resource_changes.filter(
            (e) =>
              !(
                e.address === INPUTS_HASH_ADDRESS &&
                JSON.stringify(e.change?.actions) === '["delete"]' &&
                e.deposed === undefined &&
                (e.previous_address ?? e.address) === e.address &&
                (e.change?.importing ?? null) === null
              ),
          ),
        };
        const deletesLeft = withoutOwnDelete.resource_changes.some(
          (e) => Array.isArray(e.change?.actions) && (e.change.actions as unknown[]).includes('delete'),
        );
        if (deletesLeft)
          assert.ok(classifyPlan(JSON.parse(JSON.stringify(plan)), { ...ignore, destroyPlan: true }).gated);
      }),
      { numRuns: runs(100) },
    );
  });

  test('streaming equals the reference under random chunking and formatting', async () => {
    await fc.assert(
      fc.asyncProperty(
        planArbitrary,
        fc.array(fc.nat(), { maxLength: 8 }),
        fc.constantFrom(undefined, 1, '\t'),
        async (plan, cuts, indent) => {
          const text = JSON.stringify(plan, null, indent);
          const bytes = Buffer.from(text);
          const expected = classifyPlan(JSON.parse(text), ignore);
          const streamed = await classifyPlanStream(
            chunked(
              bytes,
              cuts.map((cut) => cut % (bytes.length + 1)),
            ),
            ignore,
          );
          assert.deepEqual(streamed, expected);
        },
      ),
      { numRuns: runs(60) },
    );
  });

  // One generated plan per run (a split at every byte of a plan of several kB is a few thousand reads
  // of it): every cut of every token kind is proved on stream.test.ts's covering document, and the
  // random chunkings above reach generated shapes.
  test('streaming equals the reference with the document split at every byte boundary', async () => {
    await fc.assert(
      fc.asyncProperty(planArbitrary, async (plan) => {
        const bytes = Buffer.from(JSON.stringify(plan));
        const expected = classifyPlan(JSON.parse(bytes.toString('utf8')), ignore);
        for (let cut = 0; cut <= bytes.length; cut++)
          assert.deepEqual(await classifyPlanStream(chunked(bytes, [cut]), ignore), expected);
      }),
      { numRuns: runs(1) },
    );
  });

  test('any truncation of a generated plan is an error, never a classification', async () => {
    await fc.assert(
      fc.asyncProperty(
        planArbitrary,
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        async (plan, fraction) => {
          const bytes = Buffer.from(JSON.stringify(plan));
          const cut = Math.floor(fraction * bytes.length);
          await assert.rejects(
            classifyPlanStream(chunked(bytes.subarray(0, cut), []), ignore),
            /PlanUnreadable|unreadable|no plan document/,
          );
        },
      ),
      { numRuns: runs(50) },
    );
  });

  // property-runs.ts's own test lives here: a test file of its own would cost more to start than all it checks.
  test("CAPTF_PROPERTY_RUNS multiplies every run count; CAPTF_PROPERTY_SEED, when set, is every property's seed", () => {
    const saved = process.env.CAPTF_PROPERTY_RUNS;
    try {
      process.env.CAPTF_PROPERTY_RUNS = '3';
      assert.equal(runs(50), 150);
      delete process.env.CAPTF_PROPERTY_RUNS;
      assert.equal(runs(50), 50);
    } finally {
      if (saved !== undefined) process.env.CAPTF_PROPERTY_RUNS = saved;
    }
    const seed = process.env.CAPTF_PROPERTY_SEED;
    assert.equal(fc.readConfigureGlobal().seed, seed ? Number(seed) : undefined);
  });
});
