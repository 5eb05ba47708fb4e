// Issue 17 §3, CI and review, end to end with the real terraform: the drift report tells what changed
// outside terraform from where the inputs differ from the state; the summary's counts agree with
// terraform's own "Plan:" line in the same log, or say why they differ; --detailed-exitcode and
// --summary-md are flags only, and a summary never holds a secret.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { readFile, symlink, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { modules, NEWER_TERRAFORM, newerTerraformEnv, tempDir, type TerraformState } from '../support/tf-modules.ts';
import { explain, runRunner, type Scenario } from '../support/runner.ts';
import { IMAGE } from './apply.support.ts';
import { firstApplyOnce } from './first-apply.support.ts';

// Every character Markdown, HTML or JSON would escape: the summary must hold it in none of their forms.
const CANARY = 'Md*canary_<b>|`q`&-7Zx';
const canaryForms = [
  CANARY,
  JSON.stringify(CANARY).slice(1, -1),
  CANARY.replace(/[\\`*_{}[\]<>#+!|~&]/g, (c) => `\\${c}`),
  CANARY.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;'),
  'Md*canary',
];
const INPUTS = { 'sensitive.tfvars.json': { cluster_name: CANARY } };

// The base module's first apply (a sensitive cluster name): made once per file; one test asserts
// its run, and every test that starts from it works on a copy of the state it left.
const base = firstApplyOnce(modules.base, INPUTS, ['--image', IMAGE]);

/** Edits one resource's `input` in the local state file, as an outside writer of the state would. */
async function editInput(s: Scenario, name: string, value: unknown): Promise<void> {
  const state = JSON.parse(await readFile(s.state, 'utf8')) as TerraformState;
  const resource = state.resources.find((r) => !r.module && r.name === name)!;
  resource.instances[0]!.attributes.input = { value, type: 'string' };
  state.serial += 1;
  await writeFile(s.state, JSON.stringify(state, null, 2));
}

/** terraform's own count lines in the log (the held plan is printed before the summary). */
const terraformLines = (stdout: string) => [...stdout.matchAll(/^\| (Plan: .*\.)$/gm)].map((m) => m[1]);

describe('the drift report', () => {
  it('an edited state: nothing changed outside terraform, the inputs differ from the state at the address named', async (t) => {
    const s = await base.applied(t);
    await editInput(s, 'network', '10.9.0.0/16');
    const run = await s.run('drift', ['--image', IMAGE]);
    assert.equal(run.exitCode, 0, explain(run));
    const r = run.result!;
    assert.equal(r.reason, 'DriftFound');
    assert.deepEqual(r.drift!.inputsDiffer, [{ address: 'terraform_data.network', actions: ['update'] }]);
    assert.equal(r.drift!.inputsDifferTotal, 1);
    assert.equal(r.drift!.resourceDriftTotal, 0);
    assert.match(
      r.message,
      /^Drift found: nothing was reported changed outside terraform; the inputs differ from the state \(1: the inputs or the module ask for other values than the state records\): terraform_data\.network \(update\)\. A remediation apply would make these changes: 0 to create, 1 to update, /,
    );
  });

  it('an object terraform reports changed outside terraform is told apart from one whose inputs differ', async (t) => {
    const s = await base.applied(t);
    await editInput(s, 'network', '10.9.0.0/16');
    await s.useModule(modules.update); // terraform_data.cluster: update, from the module
    // terraform_data only drifts through its state; what a provider's refresh finds is added to the real plan document.
    const add = join(s.dir, 'drift.json');
    await writeFile(
      add,
      JSON.stringify({
        resource_drift: [
          {
            address: 'terraform_data.network',
            mode: 'managed',
            type: 'terraform_data',
            name: 'network',
            change: { actions: ['update'] },
          },
        ],
      }),
    );
    const run = await s.run(
      'drift',
      ['--image', IMAGE, '--terraform', NEWER_TERRAFORM],
      newerTerraformEnv({ showAdd: add }),
    );
    assert.equal(run.exitCode, 0, explain(run));
    const r = run.result!;
    assert.deepEqual(
      r.drift!.resourceDrift.map((d) => d.address),
      ['terraform_data.network'],
    );
    assert.deepEqual(r.drift!.inputsDiffer, [{ address: 'terraform_data.cluster', actions: ['update'] }]);
    assert.match(
      r.message,
      /^Drift found: changed outside terraform \(1\): terraform_data\.network; the inputs differ from the state \(1: [^)]*\): terraform_data\.cluster \(update\)\. A remediation apply would make these changes: 0 to create, 2 to update/,
    );
  });
});

describe("the counts and terraform's own line", () => {
  it("the first apply: terraform counts the runner's record, and the summary quotes its line and says so", async (t) => {
    const s = await base.applied(t);
    const { run: first } = await base.first();
    const stdout = first.stdout;
    assert.deepEqual(terraformLines(stdout), ['Plan: 10 to add, 0 to change, 0 to destroy.']);
    assert.match(
      stdout,
      /^plan: 9 to create, 0 to update, 0 to replace, 0 to delete, 0 to forget, 0 to import, 0 to move; outputs change; terraform's own count: "Plan: 10 to add, 0 to change, 0 to destroy\." \(it counts the runner's record terraform_data\.captf_inputs_hash \(create\), which the runner never counts/m,
    );
    // A replace: terraform counts an add and a destroy; the record is kept as it is, so only the replace explains the difference.
    await s.useModule(modules.replace);
    // The module changed, the inputs and the image did not: the approval hash is still the first apply's.
    // No run was blocked for it: --expect-lineage names the state it covers.
    const replace = await s.run('apply', [
      '--image',
      IMAGE,
      '--approved-hash',
      first.result!.approvalHash!,
      '--expect-lineage',
      first.result!.state!.lineage!,
    ]);
    assert.equal(replace.exitCode, 0, explain(replace));
    const [line] = terraformLines(replace.stdout);
    assert.equal(line, 'Plan: 1 to add, 0 to change, 1 to destroy.');
    assert.ok(
      replace.stdout.includes(`terraform's own count: "${line}" (it counts each replace as an add and a destroy)\n`),
      replace.stdout,
    );
  });

  it('a destroy: terraform counts the record among what it destroys', async (t) => {
    const s = await base.applied(t);
    const run = await s.run('destroy', ['--image', IMAGE]);
    assert.equal(run.exitCode, 0, explain(run));
    const [line] = terraformLines(run.stdout);
    assert.equal(line, 'Plan: 0 to add, 0 to change, 10 to destroy.');
    assert.match(
      run.stdout,
      new RegExp(
        `terraform's own count: "${line.replace(/\./g, '\\.')}" \\(it counts the runner's record terraform_data\\.captf_inputs_hash \\(delete\\)`,
      ),
    );
    assert.match(run.result!.message, /^Destroyed 9 resource instances\.$/);
  });
});

const PLANS = resolve(import.meta.dirname, '../fixtures/plans/terraform-1.11');

describe('--detailed-exitcode', () => {
  it('drift: 0 without drift, 6 with drift found (the outcome stays succeeded); CAPTF_DETAILED_EXITCODE and CAPTF_SUMMARY_MD in the environment do nothing', async (t) => {
    const s = await base.applied(t);
    const none = await s.run('drift', ['--image', IMAGE, '--detailed-exitcode']);
    assert.equal(none.exitCode, 0, explain(none));
    assert.equal(none.result!.reason, 'NoDrift');
    await editInput(s, 'network', '10.9.0.0/16');
    const found = await s.run('drift', ['--image', IMAGE, '--detailed-exitcode']);
    assert.equal(found.exitCode, 6, explain(found));
    assert.equal(found.result!.outcome, 'succeeded');
    assert.equal(found.result!.exitCode, 6, 'the result says the exit code the process ends with');
    const summary = join(s.dir, 'from-env.md');
    const fromEnv = await s.run('drift', ['--image', IMAGE], {
      CAPTF_DETAILED_EXITCODE: '1',
      CAPTF_SUMMARY_MD: summary,
      CAPTF_LOCK_TIMOUT: '1s',
    });
    assert.equal(fromEnv.exitCode, 0, explain(fromEnv));
    assert.equal(fromEnv.result!.reason, 'DriftFound');
    assert.equal(existsSync(summary), false, 'CAPTF_SUMMARY_MD wrote nothing');
    // Each variable that is no setting is named (a misspelt one with the setting it resembles), never silently ignored.
    const unknown = fromEnv
      .result!.notices?.filter((n) => n.code === 'SettingVariableUnknown')
      .map((n) => n.message.split(' ')[0]);
    assert.deepEqual(unknown, ['CAPTF_DETAILED_EXITCODE', 'CAPTF_LOCK_TIMOUT', 'CAPTF_SUMMARY_MD']);
    assert.ok(
      fromEnv.result!.warnings?.some((w) => w.includes('did you mean CAPTF_LOCK_TIMEOUT?')),
      explain(fromEnv),
    );
  });

  it('classify: 3 for a gated plan, 0 for one that is not; the environment cannot turn it on', async () => {
    const gated = await runRunner(['classify', join(PLANS, 'replace__plan.json'), '--detailed-exitcode']);
    assert.equal(gated.exitCode, 3, gated.stderr);
    assert.match(gated.stdout, /^gated/);
    const plain = await runRunner(['classify', join(PLANS, 'create__plan.json'), '--detailed-exitcode']);
    assert.equal(plain.exitCode, 0, plain.stderr);
    const fromEnv = await runRunner(['classify', join(PLANS, 'replace__plan.json')], { CAPTF_DETAILED_EXITCODE: '1' });
    assert.equal(fromEnv.exitCode, 0, fromEnv.stderr);
  });
});

describe('--summary-md', () => {
  it('a blocked apply, then the approved one: appended, gated change first with what forces the replace, the exact commands, the masked plan; never the secret', async (t) => {
    const s = await base.applied(t);
    await s.useModule(modules.replace);
    const summary = join(s.dir, 'step-summary.md');
    const blocked = await s.run('apply', [
      '--image',
      IMAGE,
      '--summary-md',
      summary,
      '--object',
      'demo',
      '--namespace',
      'ns',
    ]);
    assert.equal(blocked.exitCode, 3, explain(blocked));
    const hash = blocked.result!.approvalHash!;
    let text = await readFile(summary, 'utf8');
    assert.match(text, /^### captf-runner apply: blocked \(DestructivePlanBlocked\), exit 3\n/);
    assert.ok(text.indexOf('**Deletes or replaces (1)**') < text.indexOf('**Counts:**'), text);
    assert.match(
      text,
      /\| replace \| `terraform_data\.cluster` \| replace\\_because\\_cannot\\_update \| `\["triggers_replace"\]` \|/,
    );
    assert.match(
      text,
      new RegExp(
        `kubectl annotate terraformcluster demo -n ns captf\\.io/approve-destructive-plan=${hash} --overwrite`,
      ),
    );
    assert.ok(text.includes(`--object demo --namespace ns --approved-hash ${hash}\n`), text);
    assert.match(text, /terraform's own count: "Plan: 1 to add, 0 to change, 1 to destroy\."/);
    assert.match(text, new RegExp(`- result: \`${s.out.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/result\\.json\``));
    assert.match(
      text,
      /<details><summary>terraform's plan \(masked\)<\/summary>\n\n```+\n[^]*# terraform_data\.cluster must be replaced/,
    );
    assert.ok(
      blocked.stdout.includes(CANARY) === false && text.includes('(sensitive value)'),
      'the plan showed the masked name',
    );

    // The command the summary gives, run as given: it applies, and appends its own summary.
    const command = /To apply it here once reviewed:\*\*\n\n```sh\ncaptf-runner (.*)\n```/.exec(text)![1]!.split(' ');
    const approved = await runRunner(command, {}, s);
    assert.equal(approved.exitCode, 0, explain(approved));
    assert.equal(approved.result!.reason, 'ApplySucceeded');
    text = await readFile(summary, 'utf8');
    assert.equal(text.match(/^### captf-runner apply: /gm)?.length, 2, 'appended, never overwritten');
    assert.match(text, /^### captf-runner apply: succeeded \(ApplySucceeded\), exit 0$/m);
    assert.match(text, /- backup of the state before the run: `[^`]+\/backup-[^`]+`/);
    for (const form of canaryForms) {
      assert.ok(!text.includes(form), `the summary holds ${JSON.stringify(form)}`);
      for (const run of [blocked, approved])
        assert.ok(!run.allBytes.includes(form), `the run wrote ${JSON.stringify(form)}`);
    }
  });

  it('plan: a gated plan, the exact command to apply the approved plan artifact, said alike in both summaries, which works as given', async (t) => {
    const s = await base.applied(t);
    await s.useModule(modules.replace);
    const summary = join(s.dir, 'summary.md');
    const artifacts = join(s.dir, 'artifacts');
    const plan = await s.run('plan', ['--image', IMAGE, '--artifacts', artifacts, '--summary-md', summary]);
    assert.equal(plan.exitCode, 0, explain(plan));
    const text = await readFile(summary, 'utf8');
    assert.match(text, /^### captf-runner plan: succeeded \(PlanCreated\), exit 0\n/);
    assert.match(text, /- plan artifact: `[^`]+\/plan-[^`]+` \(plan hash `[0-9a-f]{64}`\)/);
    assert.match(plan.stdout, /^applying this plan needs an approval \(plan\.gated\)$/m);
    const command = markdownCommand(text, 'To apply this plan once reviewed:');
    assert.equal(nextLineCommand(plan.stdout), command, 'the next: line says the same command');
    assert.ok(!command.includes('--artifacts') && command.includes('--approved-plan-hash'), command);
    const apply = await runRunner(shellWords(command), {}, s);
    assert.equal(apply.exitCode, 0, explain(apply));
    assert.equal(apply.result!.reason, 'ApplySucceeded');
    assert.equal(apply.result!.planHash, plan.result!.planHash);
  });

  it('a FILE that is the state, a link to it, the result or a FIFO: refused before anything runs (exit 2), nothing appended; the state is as it was', async (t) => {
    const s = await base.applied(t);
    const state = await readFile(s.state);
    await symlink(s.state, join(s.dir, 'link-to-state.md'));
    const fifo = join(s.dir, 'fifo.md');
    await new Promise<void>((done, fail) =>
      spawn('mkfifo', [fifo]).once('exit', (code) => (code === 0 ? done() : fail(new Error(`mkfifo exited ${code}`)))),
    );
    const cases: [string, RegExp][] = [
      [s.state, /is the file of --state/],
      [join(s.dir, 'link-to-state.md'), /is a symbolic link/],
      [join(s.out, 'result.json'), /is inside the directory of --out/],
      [fifo, /is a FIFO or socket/],
      [join(s.dir, 'no-such-dir', 'summary.md'), /is in a directory that cannot be used \(ENOENT\)/],
    ];
    for (const [summary, problem] of cases) {
      const run = await s.run('apply', ['--image', IMAGE, '--summary-md', summary]);
      assert.equal(run.exitCode, 2, `${summary}: ${explain(run)}`);
      assert.equal(run.result!.reason, 'SummaryMdUnusable');
      assert.match(run.result!.message, problem);
      assert.deepEqual(run.result!.steps, [], 'nothing ran');
      assert.deepEqual(await readFile(s.state), state, `${summary}: the state is as it was`);
    }
    const fromResult = JSON.parse(await readFile(join(s.out, 'result.json'), 'utf8'));
    assert.equal(fromResult.reason, 'SummaryMdUnusable', "result.json is the runner's, nothing appended to it");
  });

  it('classify: addresses, actions and replace_paths, never a value of the plan', async (t) => {
    const dir = await tempDir(t, 'captf-classify-md-');
    const summary = join(dir, 'summary.md');
    const file = join(PLANS, 'replace__plan.json');
    const run = await runRunner(['classify', file, '--summary-md', summary]);
    assert.equal(run.exitCode, 0, run.stderr);
    const text = await readFile(summary, 'utf8');
    assert.match(text, /^### captf-runner classify: gated/);
    assert.match(text, /\| replace \| `terraform_data\.cluster` \| `\["triggers_replace"\]` \|/);
    // Every string value the document holds under before/after: none is in the summary.
    const values = new Set<string>();
    const walk = (v: unknown): void => {
      if (typeof v === 'string' && v.length >= 4) values.add(v);
      else if (v && typeof v === 'object') Object.values(v).forEach(walk);
    };
    for (const change of JSON.parse(await readFile(file, 'utf8')).resource_changes)
      walk([change.change.before, change.change.after]);
    assert.ok(values.size > 0);
    for (const value of values)
      assert.ok(!text.includes(value), `the classify summary holds the value ${JSON.stringify(value)}`);

    // The document itself as the summary: refused before it is read, and left as it was.
    const copy = join(dir, 'plan.json');
    await writeFile(copy, await readFile(file));
    const refused = await runRunner(['classify', copy, '--summary-md', copy]);
    assert.equal(refused.exitCode, 2, refused.stderr);
    assert.match(
      refused.stderr,
      /^captf-runner classify: --summary-md .*plan\.json is the file of FILE .*: nothing was run\./,
    );
    assert.deepEqual(await readFile(copy), await readFile(file));

    // An address holding control characters (a for_each key): escaped on stdout, as text and as JSON, and in the summary.
    const document = JSON.parse(await readFile(file, 'utf8'));
    document.resource_changes.find((c: { address: string }) => c.address === 'terraform_data.cluster').address =
      'terraform_data.cluster["\x1b[2J\r\u202e"]';
    await writeFile(copy, JSON.stringify(document));
    const forged = join(dir, 'forged.md');
    for (const args of [[], ['--json']]) {
      const run = await runRunner(['classify', copy, '--summary-md', forged, ...args]);
      assert.equal(run.exitCode, 0, run.stderr);
      assert.ok(run.stdout.includes(args.length ? '\\u001b[2J\\r\\u202e' : '\\x1b[2J\\r\\u202e'), run.stdout);
      assert.doesNotMatch(run.stdout + (await readFile(forged, 'utf8')), /[\x1b\r\u202e]/);
    }
  });
});

/** The command a summary's `next:` line ends with. */
function nextLineCommand(stdout: string): string {
  const next = /^next: .*?(captf-runner .*)$/m.exec(stdout);
  assert.ok(next, `no command in the next: line\n${stdout.slice(-2000)}`);
  return next[1]!;
}

/** The command of the Markdown block under `title`. */
function markdownCommand(text: string, title: string): string {
  const at = text.indexOf(`**${title}`);
  assert.ok(at >= 0, `no "${title}" in the summary\n${text}`);
  return /```sh\n(captf-runner .*)\n```/.exec(text.slice(at))![1]!;
}

/** A command line as a shell splits it: words apart at spaces, '…' quoting (as the runner quotes). */
function shellWords(command: string): string[] {
  const words = [...command.matchAll(/(?:'[^']*'|[^\s'])+/g)].map((m) => m[0].replace(/'([^']*)'/g, '$1'));
  assert.equal(words[0], 'captf-runner');
  return words.slice(1);
}

describe('every command the summaries suggest, run as given', () => {
  it('a blocked apply on a laptop (no --object): no kubectl anywhere; the command with the approval applies, and says the approval matched', async (t) => {
    const s = await base.applied(t);
    await s.useModule(modules.replace);
    const summary = join(s.dir, 'summary.md');
    const blocked = await s.run('apply', ['--image', IMAGE, '--summary-md', summary]);
    assert.equal(blocked.exitCode, 3, explain(blocked));
    const text = await readFile(summary, 'utf8');
    assert.doesNotMatch(text, /kubectl|To approve/, text);
    assert.doesNotMatch(blocked.stdout, /kubectl/);
    assert.match(
      blocked.stdout,
      /^next: review the destructive changes above; to apply the plan, run again with the approval: captf-runner apply /m,
    );
    const command = nextLineCommand(blocked.stdout);
    assert.equal(markdownCommand(text, 'To apply it here once reviewed:'), command);
    const approved = await runRunner(shellWords(command), {}, s);
    assert.equal(approved.exitCode, 0, explain(approved));
    assert.equal(approved.result!.reason, 'ApplySucceeded');
    assert.match(
      approved.stdout,
      new RegExp(`^approved: the approval given matched approval hash ${blocked.result!.approvalHash}`, 'm'),
    );
    assert.doesNotMatch(approved.stdout, /needs an approval/);
    assert.match(await readFile(summary, 'utf8'), /\*\*Approved:\*\* the approval given matched/);
  });

  it('drift found (--detailed-exitcode): both summaries name the remediation apply, without the flags apply refuses; it remediates', async (t) => {
    const s = await base.applied(t);
    await editInput(s, 'network', '10.9.0.0/16');
    const summary = join(s.dir, 'summary.md');
    const drift = await s.run('drift', ['--image', IMAGE, '--detailed-exitcode', '--summary-md', summary]);
    assert.equal(drift.exitCode, 6, explain(drift));
    const command = nextLineCommand(drift.stdout);
    assert.match(drift.stdout, /^next: to remediate, apply the inputs again: captf-runner apply /m);
    assert.equal(markdownCommand(await readFile(summary, 'utf8'), 'To remediate:'), command);
    assert.doesNotMatch(command, /--detailed-exitcode/);
    const remediated = await runRunner(shellWords(command), {}, s);
    assert.equal(remediated.exitCode, 0, explain(remediated));
    assert.equal(remediated.result!.reason, 'ApplySucceeded');
    const network = (await s.readState()).resources.find((r) => r.name === 'network')!;
    assert.notEqual(
      (network.instances[0]!.attributes.input as { value: string }).value,
      '10.9.0.0/16',
      'the remediation applied the inputs again',
    );
  });
});
