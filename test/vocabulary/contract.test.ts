// The contract speaks the runner's closed vocabulary: contract/sections/reasons.md is generated from
// it, every CamelCase word the contract quotes is a reason, a notice, a DecideOp reason or one of the
// few other names listed here (a reason the contract names that no run emits fails), and the steps
// contract.md §3 lists for each op are steps of src/vocabulary/steps.ts that name that op.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { REASONS_SECTION, renderReasonsSection } from '../../scripts/generators/gen-vocabulary.ts';
import { NOTICE_CODES } from '../../src/schemas/result.ts';
import { OpReason, WaitReason } from '../../src/controller-model/decision.ts';
import { OPS, REASONS, type Op } from '../../src/vocabulary/reasons.ts';
import { STEPS, type StepName } from '../../src/vocabulary/steps.ts';
import { Settings, envName } from '../../src/schemas/config.ts';
import { COMMON_SETTINGS, OP_SETTINGS, REPORT_FLAGS } from '../../src/schemas/setting-options.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string) => readFileSync(`${ROOT}${path}`, 'utf8');
const CONTRACT_FILES = [
  'contract.md',
  ...readdirSync(`${ROOT}contract/sections`).map((name) => `contract/sections/${name}`),
];

/** CamelCase names the contract quotes that are not the runner's reasons, notices or DecideOp's reasons. */
const OTHER_NAMES = new Set([
  // terraform's and OpenTofu's words (provider action triggers and failure modes, in plans)
  ...[
    'AfterCreate',
    'AfterUpdate',
    'AfterDestroy',
    'BeforeCreate',
    'BeforeUpdate',
    'BeforeDestroy',
    'ActionOnFailureContinue',
    'ActionOnFailureHalt',
    'ActionOnFailureTaint',
    'NaN',
  ],
  // Kubernetes' words
  ...[
    'DisruptionTarget',
    'DeadlineExceeded',
    'FailJob',
    'PartialObjectMetadata',
    'PartialObjectMetadataList',
    'TerraformMachinePool',
    'DependenciesReady',
  ],
  // the S3 API's words
  'LastModified',
  // the kinds of artifact manifests and the names of the schemas
  ...['PlanArtifact', 'StateBackup', 'ArtifactManifest', 'PolicyFile', 'RunnerError'],
  // DecideOp's decision that is neither an op nor a wait, and the event of an op decision or a Job's image (events)
  'DeletingWithoutState',
  'DigestUnknown',
]);

describe('the contract and the vocabulary', () => {
  it('contract/sections/reasons.md is generated from src/vocabulary (node --import tsx scripts/generators/gen-vocabulary.ts)', () => {
    assert.equal(readFileSync(REASONS_SECTION, 'utf8'), renderReasonsSection());
  });

  it('every CamelCase name the contract quotes is a known word: a reason no run emits cannot be named', () => {
    const known = new Set<string>([
      ...Object.keys(REASONS),
      ...NOTICE_CODES,
      ...OpReason.options,
      ...WaitReason.options,
      ...OTHER_NAMES,
    ]);
    const unknown: string[] = [];
    for (const file of CONTRACT_FILES) {
      for (const match of read(file).matchAll(/`([A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+)`/g))
        if (!known.has(match[1]!)) unknown.push(`${file}: ${match[1]}`);
    }
    assert.deepEqual(unknown, []);
  });

  it('the steps contract.md §3 lists for each op are steps of that op', () => {
    const table = read('contract.md').split('## 3. Ops')[1]!.split('\n## ')[0]!;
    const seen = new Set<Op>();
    for (const line of table.split('\n')) {
      const cells = line.split(' | ');
      const op = /^\| `(\w+)( --plan-artifact)?`$/.exec(cells[0] ?? '')?.[1] as Op | undefined;
      if (op === undefined || !OPS.includes(op)) continue;
      seen.add(op);
      for (const name of stepsOfCell(cells[1]!)) {
        assert.ok(name in STEPS, `contract.md §3 lists "${name}" for ${op}: no such step (src/vocabulary/steps.ts)`);
        assert.ok(
          (STEPS[name as StepName].ops as readonly Op[]).includes(op),
          `contract.md §3 lists "${name}" for ${op}, which src/vocabulary/steps.ts does not give that op`,
        );
      }
    }
    assert.deepEqual([...seen].sort(), [...OPS].sort(), 'every op has its row');
  });

  it("faults.md's steps of apply, in order, are apply's steps", () => {
    const listed = /Steps of `apply` in order: ([^]*?)\.\n/.exec(read('contract/sections/faults.md'))?.[1];
    assert.ok(listed, 'faults.md lists the steps of apply');
    for (const name of stepsOfCell(listed))
      assert.ok(
        (STEPS[name as StepName]?.ops as readonly Op[] | undefined)?.includes('apply'),
        `faults.md lists "${name}" among apply's steps`,
      );
  });
  it("every CAPTF_* variable the contract names is a setting (or a report flag said to have none), and the per-op table of what a Job is given names only the op's own", () => {
    const settings = new Set(Object.keys(Settings.shape).map(envName));
    const flagOnly = new Set(Object.keys(REPORT_FLAGS).map(envName));
    for (const file of CONTRACT_FILES) {
      for (const [name] of read(file).matchAll(/CAPTF_[A-Z][A-Z_]*[A-Z]/g))
        assert.ok(
          settings.has(name) || flagOnly.has(name) || name === 'CAPTF_LOCK_TIMOUT',
          `${file} names ${name}, which is no setting`,
        );
    }
    const table = read('contract/sections/kubernetes.md')
      .split('### What a Job is given, per op')[1]!
      .split('\n### ')[0]!;
    const common = new Set(COMMON_SETTINGS.map(envName));
    const seen = new Set<Op>();
    for (const line of table.split('\n')) {
      const cells = line.split(' | ');
      const op = /^\| `(\w+)`/.exec(cells[0] ?? '')?.[1] as Op | undefined;
      if (op === undefined || !OPS.includes(op)) continue;
      seen.add(op);
      const own = new Set(OP_SETTINGS[op].map(envName));
      for (const [name] of cells[2]!.matchAll(/CAPTF_[A-Z_]+/g))
        assert.ok(own.has(name) && !common.has(name), `${op}: ${name} is no setting of that op alone`);
    }
    assert.deepEqual([...seen].sort(), [...OPS].sort(), 'every op has its row');
  });
});

/** The step names of a Steps cell: parenthesised notes and brackets (optional steps) dropped, `…` (the steps before, as above) skipped. */
function stepsOfCell(cell: string): string[] {
  // A step whose name holds parentheses is kept whole: `state push (lineage)`.
  const named = Object.keys(STEPS).filter((name) => name.includes('('));
  let text = named.reduce((cell, name, index) => cell.split(name).join(`\u0000${index}`), cell);
  for (let before = ''; before !== text; ) [before, text] = [text, text.replace(/\([^()]*\)/g, '')];
  return text
    .replace(/[[\]]/g, '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '' && name !== '…')
    .map((name) => name.replace(/\u0000(\d+)/g, (_, index: string) => named[Number(index)]!));
}
