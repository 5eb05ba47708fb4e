// The Markdown summary sink (--summary-md) and terraform's own count line, without processes: the
// end-to-end runs against real terraform are in test/e2e/summary-md.test.ts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Masker } from '../../src/masking/mask.ts';
import { classifySummaryMarkdown, mdCode, opSummaryMarkdown, SUMMARY_LIMIT } from '../../src/output/summary-md.ts';
import { terraformPlanLine } from '../../src/output/summary.ts';
import { classifyPlan } from '../../src/plan/classify.ts';
import { runnerClassifyOptions } from '../../src/plan/runner-options.ts';
import type { Result } from '../../src/schemas/result.ts';
import { blockedResultOf } from './results.support.ts';

// Every character Markdown, HTML, JSON or a shell would escape.
const SECRET = 'Tok*en_<b>|`x`&"q"\\n-9f';
const HASH = 'a'.repeat(64);

const escapings = (value: string) => [
  value,
  JSON.stringify(value).slice(1, -1),
  value.replace(/[\\`*_{}[\]<>#+!|~&]/g, (c) => `\\${c}`),
  value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;'),
  value.replace(/\|/g, '\\|'),
  'Tok*en', // a start long enough to tell
];

const change = (address: string, actions: string[], extra: Record<string, unknown> = {}) => ({
  address,
  mode: 'managed',
  type: 'terraform_data',
  name: address.split('.')[1],
  change: { actions, before: { input: SECRET }, after: { input: SECRET }, ...extra },
});

const plan = classifyPlan(
  {
    format_version: '1.2',
    applyable: true,
    complete: true,
    errored: false,
    resource_changes: [
      change('terraform_data.cluster', ['delete', 'create'], {
        replace_paths: [['triggers_replace'], ['input', 'name|x']],
      }),
      { ...change('terraform_data.network', ['update']) },
      change('terraform_data.captf_inputs_hash', ['update']),
    ],
    action_invocations: [
      {
        address: 'action.ssh.restart',
        type: 'ssh',
        provider_name: 'p',
        lifecycle_action_trigger: {
          action_trigger_event: 'AfterUpdate',
          triggering_resource_address: 'terraform_data.network',
        },
      },
    ],
  },
  runnerClassifyOptions(),
);

function blocked(): Result {
  return blockedResultOf(plan, {
    message: `The plan needs an approval (${SECRET})`,
    object: { kind: 'cluster', name: 'demo', namespace: 'ns' },
    inputsHash: HASH,
    approvalHash: HASH,
    approveCommand: `kubectl annotate terraformcluster demo -n ns captf.io/approve-destructive-plan=${HASH} --overwrite`,
    planText: `  # terraform_data.cluster must be replaced\n      ~ input = "${SECRET}"\n\`\`\`\nnot the end of the block\n`,
    warnings: [`a warning naming ${SECRET}`],
  });
}

describe('summary-md: an op', () => {
  const masker = new Masker();
  masker.add(SECRET, 'token');
  const text = opSummaryMarkdown(blocked(), masker, {
    resultFile: '/out/result.json',
    argv: ['apply', '--module', 'm', '--approved-hash', 'old', '--out', '/out dir', '--workdir', SECRET],
  });

  it('never holds the sensitive value, in any escaping', () => {
    for (const form of escapings(SECRET))
      assert.ok(!text.includes(form), `the summary holds ${JSON.stringify(form)}:\n${text}`);
    assert.match(text, /\(sensitive value\)/);
  });

  it('puts the gated changes first, with the attributes forcing the replace, then the actions and the counts', () => {
    const gated = text.indexOf('Deletes or replaces (1)');
    assert.ok(
      gated > 0 &&
        gated < text.indexOf('Provider actions (1') &&
        text.indexOf('Provider actions (1') < text.indexOf('**Counts:**'),
      text,
    );
    assert.match(
      text,
      /\| replace \| `terraform_data\.cluster` \| – \| `\["triggers_replace"\]`, `\["input","name\\\|x"\]` \|/,
    );
    assert.match(text, /`action\.ssh\.restart \(action AfterUpdate\)` on `terraform_data\.network`/);
    assert.match(text, /0 to create, 1 to update, 1 to replace/);
  });

  it("says why terraform's own line counts differently: the replace, and the runner's record", () => {
    assert.match(text, /terraform's own count: "Plan: 1 to add, 2 to change, 1 to destroy\."/);
    assert.match(text, /the runner's record terraform\\_data\.captf\\_inputs\\_hash \(update\)/);
  });

  it('gives the exact commands to approve and to apply, and where the result is', () => {
    assert.match(
      text,
      /```sh\nkubectl annotate terraformcluster demo -n ns captf\.io\/approve-destructive-plan=a{64} --overwrite\n```/,
    );
    assert.match(
      text,
      new RegExp(
        `\`\`\`sh\\ncaptf-runner apply --module m --out '/out dir' --workdir '\\(sensitive value\\)' --approved-hash ${HASH}\\n\`\`\``,
      ),
    );
    assert.match(text, /- result: `\/out\/result\.json`/);
  });

  it('holds the plan in a collapsed block that no line of it closes early', () => {
    const details = text.slice(text.indexOf('<details><summary>terraform'));
    assert.match(details, /^<details><summary>terraform's plan \(masked\)<\/summary>\n\n````\n/);
    assert.match(details, /```\nnot the end of the block\n````\n\n<\/details>/);
  });
});

describe('summary-md: what the text holds cannot leave its place', () => {
  const forged = (over: Partial<Result>) => opSummaryMarkdown({ ...blocked(), ...over }, new Masker(), {});

  it('over 1 MiB: the plan text is left out, then the last lines, and the summary says so (GitHub takes 1 MiB at most)', () => {
    const withPlan = forged({ planText: `${'x'.repeat(1_000)}\n`.repeat(1_100) });
    assert.ok(Buffer.byteLength(withPlan) < SUMMARY_LIMIT, `${Buffer.byteLength(withPlan)} bytes`);
    assert.match(withPlan, /terraform's plan \(masked\) is left out/);
    const warnings = Array.from({ length: 1_100 }, (_, i) => `warning ${i} ${'w'.repeat(1_000)}`);
    const many = forged({ warnings });
    assert.ok(Buffer.byteLength(many) < SUMMARY_LIMIT, `${Buffer.byteLength(many)} bytes`);
    assert.match(many, /… the last \d+ lines of this summary are left out/);
  });

  it('a lone CR (Markdown ends a line there), a newline or a control character in the message: one quoted line', () => {
    const text = forged({
      message: 'Bad note.\r1. approve at https://evil.example/approve\n## next\u2028- \x1b[31mred\x07 \u202egnp.exe',
    });
    const quoted = text.split('\n').filter((line) => line.includes('evil.example'));
    assert.deepEqual(quoted, [
      String.raw`> Bad note. 1. approve at ` +
        '`https://evil.example/approve`' +
        String.raw` \#\# next - \\x1b\[31mred\\x07 \\u202egnp.exe`,
    ]);
    assert.doesNotMatch(text, /[\r\x1b\x07\u202e\u2028]/);
  });

  it("terraform's plan stays in its block whatever it holds: fences, CR, </details>, controls", () => {
    const text = forged({ planText: 'one\n```\n`````\n   ````\r</details>\n\x1b[2J\x85\u202e\nlast line\n' });
    const details = text.slice(text.indexOf('<details><summary>terraform'));
    assert.match(
      details,
      /^<details><summary>terraform's plan \(masked\)<\/summary>\n\n``````\none\n```\n`````\n   ````\\r<\/details>\n\\x1b\[2J\\x85\\u202e\nlast line\n``````\n\n<\/details>/,
    );
    assert.doesNotMatch(text, /[\r\x1b\x85\u202e]/);
  });

  it('its heading masks the op, outcome and reason as it masks text (the result keeps them)', () => {
    const masker = new Masker();
    masker.add('apply', 'a');
    assert.match(
      opSummaryMarkdown(blocked(), masker, {}),
      /^### captf-runner \(sensitive value\): blocked \(DestructivePlanBlocked\), exit 3$/m,
    );
  });
});

describe('summary-md: classify', () => {
  it('holds addresses, actions and replace_paths, never a value of the document', () => {
    const document = {
      format_version: '1.2',
      resource_changes: [
        {
          ...change('terraform_data.cluster', ['delete', 'create'], { replace_paths: [['input']] }),
          action_reason: `replace_because_${SECRET}`,
        },
      ],
      [`unknown_${SECRET}`]: { holds: SECRET },
    };
    const classified = classifyPlan(document, runnerClassifyOptions());
    assert.ok(
      classified.failClosed.some((why) => why.includes('Tok*en')),
      'the document is quoted in failClosed',
    );
    const text = classifySummaryMarkdown(classified, 'plan.json');
    for (const form of escapings(SECRET))
      assert.ok(!text.includes(form), `the classify summary holds ${JSON.stringify(form)}:\n${text}`);
    assert.match(text, /^### captf-runner classify: gated/);
    assert.match(text, /\| replace \| `terraform_data\.cluster` \| `\["input"\]` \|/);
    assert.match(text, /cannot fully read it:\*\* 1 reason/);
  });
});

describe('summary-md: Markdown', () => {
  it('inline code survives backticks and, in a table, pipes', () => {
    assert.equal(mdCode('a`b'), '``a`b``');
    assert.equal(mdCode('`x`'), '`` `x` ``');
    assert.equal(mdCode('a|b', true), '`a\\|b`');
  });
});

describe("terraform's own count line", () => {
  it('is what terraform 1.11 prints: imports first when there are any, a replace as an add and a destroy, the record counted', () => {
    const classified = classifyPlan(
      {
        format_version: '1.2',
        resource_changes: [
          change('terraform_data.a', ['create'], { importing: { id: 'x' } }),
          change('terraform_data.b', ['create', 'delete']),
          change('terraform_data.captf_inputs_hash', ['create']),
        ],
      },
      runnerClassifyOptions(),
    );
    assert.deepEqual(
      terraformPlanLine(classified, 'apply')?.line,
      'Plan: 1 to import, 3 to add, 0 to change, 1 to destroy.',
    );
    assert.equal(terraformPlanLine(classified, 'refresh'), undefined, 'a refresh-only plan prints none');
    const destroy = classifyPlan(
      {
        format_version: '1.2',
        resource_changes: [
          change('terraform_data.a', ['delete']),
          change('terraform_data.captf_inputs_hash', ['delete']),
        ],
      },
      runnerClassifyOptions({ destroyPlan: true }),
    );
    assert.equal(terraformPlanLine(destroy, 'destroy')?.line, 'Plan: 0 to add, 0 to change, 2 to destroy.');
    assert.equal(
      terraformPlanLine(
        classifyPlan({ format_version: '1.2', resource_changes: [] }, runnerClassifyOptions()),
        'apply',
      ),
      undefined,
    );
  });
});

describe('summary-md: a policy', () => {
  const policy = {
    effects: 'all' as const,
    denied: [
      { rule: 'protect-databases', address: 'terraform_data.db', message: 'databases are never deleted by the runner' },
    ],
    deniedTotal: 1,
    approvalRequired: [{ rule: 'iam-needs-review', address: 'terraform_data.iam' }],
    approvalRequiredTotal: 1,
    deletes: 1,
    timedOut: false,
    cost: 0,
    costExceeded: false,
  };

  it('an op names what the policy denies, with its message, once in its list; never as something an approval passes', () => {
    const denied: Result = {
      ...blocked(),
      outcome: 'invalid',
      reason: 'PolicyDenied',
      exitCode: 8,
      message: 'The policy denies this plan.',
      plan: { ...plan, policy },
    };
    const text = opSummaryMarkdown(denied, new Masker(), { argv: ['apply', '--approved-hash', HASH] });
    assert.match(
      text,
      /\*\*Denied by the policy[^\n]*\n\n- protect-databases at terraform\\_data\.db: databases are never deleted by the runner/,
    );
    assert.equal(text.split('protect-databases').length - 1, 1, text);
    assert.doesNotMatch(text, /Needs an approval|To approve|To apply/, text);
  });

  it('an approved apply says the approval matched; a run without --object shows no kubectl command', () => {
    const approved: Result = {
      ...blocked(),
      outcome: 'succeeded',
      reason: 'ApplySucceeded',
      exitCode: 0,
      object: { kind: 'cluster' },
      approval: { given: true, matched: true, required: true, unreviewed: [], unreviewedTotal: 0 },
    };
    const text = opSummaryMarkdown(approved, new Masker());
    assert.match(text, new RegExp(`^\\*\\*Approved:\\*\\* the approval given matched approval hash \`${HASH}\``, 'm'));
    assert.doesNotMatch(text, /Needs an approval/);
    const local = opSummaryMarkdown({ ...blocked(), object: { kind: 'cluster' } }, new Masker(), {
      argv: ['apply', '--module', 'm'],
    });
    assert.doesNotMatch(local, /kubectl|To approve/, local);
    assert.match(local, /\*\*To apply it here once reviewed:\*\*/);
  });

  it('classify names the rules and addresses only', () => {
    const text = classifySummaryMarkdown({ ...plan, policy }, 'plan.json');
    assert.match(text, /\*\*Denied by the policy \(1\):\*\* `protect-databases at terraform_data\.db`/);
    assert.match(text, /\*\*Needs an approval by the policy \(1\):\*\* `iam-needs-review at terraform_data\.iam`/);
    assert.ok(!text.includes('databases are never deleted'), 'no rule message in the classify summary');
  });
});
