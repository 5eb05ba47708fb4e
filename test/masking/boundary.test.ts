// The one mask-then-cut boundary (masking/boundary.ts): where a cut falls, and every sink of SINKS fed
// a secret across each place it cuts a text, its bytes checked for any part of the secret. A file of
// src/ that writes bytes is a sink of SINKS or is named below with why it is none.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, openSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PassThrough } from 'node:stream';
import { denialMessage, MASKED_WHOLE, maskThenCut, maskThenCutStart, SINKS } from '../../src/masking/boundary.ts';
import { createLogger } from '../../src/output/log.ts';
import { MASK, Masker } from '../../src/masking/mask.ts';
import { maskResult } from '../../src/masking/mask-result.ts';
import { serializeResult } from '../../src/output/result-file.ts';
import { humanSummary } from '../../src/output/summary.ts';
import { opSummaryMarkdown } from '../../src/output/summary-md.ts';
import { compactResult } from '../../src/output/termination.ts';
import { terraformText } from '../../src/output/terraform-text.ts';
import { annotateJob, writeResultSecret } from '../../src/kube/sinks.ts';
import type { KubeClient, Secret } from '../../src/kube/client.ts';
import { plannedCreates } from '../../src/steps/apply-marker.ts';
import type { Result } from '../../src/schemas/result.ts';
import { manyDeletes, resultOf } from '../output/results.support.ts';

/** 40 characters; every 4 of them in a row hold a letter past `f`, so no hash or hex digest holds one by chance. */
const SECRET = 'Qz7vK9pXw2LmR4tY8nB3jH6cW1gD5sM0eUqZxNvT';

const fragments = (text: string, length: number) =>
  Array.from({ length: text.length - length + 1 }, (_, at) => text.slice(at, at + length));

/** No 4 characters of the secret in a row, nor 8 of its base64, in `bytes`. */
function assertNoFragment(bytes: string, what: string) {
  for (const part of [...fragments(SECRET, 4), ...fragments(Buffer.from(SECRET).toString('base64'), 8)]) {
    const at = bytes.indexOf(part);
    assert.equal(at, -1, `${what}: ${JSON.stringify(part)} got out: …${bytes.slice(Math.max(0, at - 80), at + 40)}…`);
  }
}

const masker = () => {
  const m = new Masker();
  m.add(SECRET, 'var.key');
  return m;
};

/** A denied plan whose message and whose one denial's message are `text`. */
const denied = (text: string): Result =>
  resultOf({
    outcome: 'invalid',
    reason: 'PolicyDenied',
    exitCode: 8,
    message: text,
    warnings: [text],
    plan: {
      ...manyDeletes(1),
      policy: {
        denied: [{ rule: 'r', message: text }],
        deniedTotal: 1,
        approvalRequired: [],
        approvalRequiredTotal: 0,
        deletes: 1,
        timedOut: false,
        cost: 0,
        costExceeded: false,
        effects: 'all',
      },
    },
  });

const JOB = { namespace: 'ns', jobName: 'job', jobUid: 'uid' };

/** How each sink of SINKS is fed a text: the bytes it writes for it, as the run hands it over. */
const DRIVERS: Record<string, (m: Masker, text: string) => Promise<string>> = {
  async 'terraform text (stdout)'(m, text) {
    const dir = await mkdtemp(join(tmpdir(), 'captf-boundary-'));
    try {
      const fd = openSync(join(dir, 'log'), 'w');
      const log = await createLogger('json', m, { op: 'apply', object: null, namespace: null }, fd);
      const stdout = new PassThrough();
      let printed = '';
      stdout.on('data', (chunk: Buffer) => (printed += chunk.toString()));
      const out = terraformText({ masker: m, log, step: () => 'plan', stdout });
      await out.lines('stdout', [text], 'plan');
      await out.end!('stdout', 'plan');
      await out.lines('stderr', [text], 'plan');
      await out.end!('stderr', 'plan');
      closeSync(fd);
      return printed + (await readFile(join(dir, 'log'), 'utf8'));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
  async 'log (stderr)'(m, text) {
    const dir = await mkdtemp(join(tmpdir(), 'captf-boundary-'));
    try {
      const fd = openSync(join(dir, 'log'), 'w');
      const log = await createLogger('json', m, { op: 'apply', object: text, namespace: null }, fd);
      log.warn({ detail: { said: text } }, text);
      log.error(new Error(text));
      closeSync(fd);
      return await readFile(join(dir, 'log'), 'utf8');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
  'result.json': async (m, text) => serializeResult(denied(text), m),
  'termination message': async (m, text) => compactResult(denied(text), m),
  'summary (stdout)': async (m, text) =>
    // As run/finish.ts prints it.
    humanSummary(denied(text), { argv: ['apply', text].map((arg) => m.mask(arg)), mask: (t) => m.mask(t) }),
  'Markdown summary': async (m, text) => opSummaryMarkdown(denied(text), m, { argv: ['apply', text] }),
  async 'result Secret'(m, text) {
    let written: Secret | undefined;
    const client = { createSecret: async (_: string, secret: Secret) => (written = secret) } as unknown as KubeClient;
    // Over what a Secret holds: the last resort cuts every long string (as op-main.ts hands it over: masked).
    await writeResultSecret(client, JOB, maskResult(m, denied(text + 'x'.repeat(1_100_000))), undefined);
    return Object.values(written!.data ?? {})
      .map((value) => Buffer.from(value, 'base64').toString('utf8'))
      .join('\n');
  },
  async 'Job annotations'(m, text) {
    let patch: unknown;
    const client = {
      patchJob: async (_: string, __: string, body: unknown) => (patch = body),
    } as unknown as KubeClient;
    await annotateJob(
      client,
      JOB,
      maskResult(m, { ...denied(text), annotations: { 'example.com/note': text } }),
      undefined,
    );
    return JSON.stringify(patch);
  },
  'apply marker (its addresses, reported by the next run)': async (m, text) =>
    JSON.stringify(plannedCreates({ changes: [{ address: text, actions: ['create'] }], changesTotal: 1 }, m)),
};

describe('output: the mask-then-cut boundary', () => {
  it('masks the whole text, then cuts within the limit: never inside a mask, never between the halves of a surrogate pair', () => {
    const m = masker();
    const text = `${'a'.repeat(90)}${SECRET}${'b'.repeat(100)}`;
    // Cut before masking, 8 characters of the secret would stay; the mask that starts at 90 does not fit 100: the cut moves to its start.
    assert.equal(maskThenCut(m, text, 100), `${'a'.repeat(90)}…`);
    assert.equal(maskThenCut(m, text, 108), `${'a'.repeat(90)}${MASK}…`);
    assert.equal(maskThenCut(m, 'short', 100), 'short');
    assert.equal(maskThenCut(m, `abc${'😀'.repeat(10)}`, 7), 'abc😀…', 'the cut at 6 would split the second emoji');
    const tailed = maskThenCut(m, 'x'.repeat(50), 30, (n) => ` (${n} more)`);
    assert.equal(tailed, `${'x'.repeat(20)} (30 more)`);
    assert.ok(maskThenCut(m, text, 1).length <= 1);
    assert.equal(maskThenCut(MASKED_WHOLE, `ab${MASK}cd`, 6), 'ab…');
  });

  it('a text the masker cannot match is written as the mask alone, at either end, and counted as unmaskable', () => {
    class FailingMasker extends Masker {
      override matches(): never {
        throw new RangeError('Maximum call stack size exceeded');
      }
    }
    const m = new FailingMasker();
    assert.equal(maskThenCutStart(m, `${'a'.repeat(50)}${SECRET}`, 20), MASK);
    assert.equal(m.unmaskable, 1, 'the stderr tail counts its failure as the whole-text mask does');
    assert.equal(m.mask(SECRET), MASK);
    assert.equal(m.unmaskable, 2);
  });

  it('cuts to a number of UTF-8 bytes at a character, the tail included, never inside a mask', () => {
    const m = masker();
    assert.equal(maskThenCut(m, `${'é'.repeat(505)}${SECRET}x`, { bytes: 1024 }), `${'é'.repeat(505)}…`);
    assert.equal(maskThenCut(m, 'ab😀😀', { bytes: 8 }), 'ab…');
    assert.equal(maskThenCut(m, 'abc😀', { bytes: 7 }), 'abc😀');
    assert.equal(Buffer.byteLength(maskThenCut(m, 'é'.repeat(100), { bytes: 50 })), 49, '23 é (46 bytes) and … (3)');
  });

  it('every sink has its driver here, and every driver a sink', () => {
    assert.deepEqual(SINKS.map((sink) => sink.name).sort(), Object.keys(DRIVERS).sort());
  });

  for (const sink of SINKS) {
    it(`${sink.name} (${sink.file}): a secret across each of its cuts (${sink.cuts.join(', ') || 'none'}) leaves no part of it`, async () => {
      for (const cut of sink.cuts.length ? sink.cuts : [100]) {
        // The secret starts 18 characters before the cut: cut first, 18 of its characters would show.
        const text = `${'p'.repeat(cut - 18)}${SECRET}${'q'.repeat(600)}`;
        const bytes = await DRIVERS[sink.name]!(masker(), text);
        assert.ok(bytes.includes('pppp'), `${sink.name} wrote the text: ${bytes.slice(0, 200)}`);
        assertNoFragment(bytes, `${sink.name}, cut at ${cut}`);
      }
    });
  }

  it('every file of src/ that writes bytes is a sink of SINKS, or is named here with why it is none', async () => {
    const WRITES =
      /writeFile\(|writeFileAtomic\(|writeSync\(|\.write\(|writeWithBackpressure\(|createSecret\(|patchJob\(|replaceSecret\(|appendFile\(|createWriteStream\(|\.commit\(/;
    /** Files that write bytes and are no sink of the runner's text, and why. */
    const NOT_SINKS: Record<string, string> = {
      'src/main.ts':
        "the exit funnel of the commands that are not ops (no secret is known there); an op's bytes go through its sinks",
      'src/commands/classify.ts':
        'classify reads a plan it is given and learns no secret: addresses, actions and paths only',
      'src/commands/hash.ts': 'prints a hash of the inputs',
      'src/commands/version.ts': 'prints versions',
      'src/commands/contract-check/command.ts': 'checks an image or tree, no inputs: it learns no secret',
      'src/json/select-json.ts': "the JSON reader's own stream (it reads, writes nothing out)",
      'src/kube/client.ts': 'the transport of the Kubernetes sinks and the Secret store',
      'src/local/edit.ts': "`local` on a laptop: the object's own files, written by the person's command",
      'src/local/history.ts': "`local`: the runs' records, from the results the runner masked",
      'src/local/object.ts': "`local`: the object's own files",
      'src/local/print.ts':
        '`local`: prints what the runner wrote in result.json (masked and cut there); it knows no secret',
      'src/local/reconcile.ts': "`local`: the object's own files",
      'src/local/run-lock.ts': "`local`: the object's lock file",
      'src/output/std-streams.ts': 'the helper the sinks write stdout through',
      'src/util/atomic-write.ts': 'the helper the sinks write files through',
      'src/util/lines.ts': "a decoder of terraform's lines (it reads)",
      'src/steps/plan-text.ts':
        "terraform's plan text kept back in the private dir, then printed through terraform-text.ts",
      'src/store/artifact-extract.ts': 'a plan artifact extracted into the workdir, for terraform',
      'src/store/artifact-write.ts':
        'plan artifacts and state backups: states by design (contract: the stores hold secrets)',
      'src/store/dir-store.ts': 'a store: states and artifacts by design',
      'src/store/secret-store.ts': 'a store: states and artifacts by design',
      'src/store/pg-store.ts': 'a store: states and artifacts by design',
      'src/terraform/exec.ts': "terraform's own process",
      'src/terraform/state.ts': 'a state pulled to a file of the private dir, for the backup',
      'src/workspace/workspace.ts': "terraform's files in the workdir (its inputs)",
      'src/workspace/plan-prior-state.ts':
        'the state a saved plan holds, copied to a file of the private dir for the runner to read',
    };
    const root = fileURLToPath(new URL('../../', import.meta.url));
    const writers: string[] = [];
    for (const entry of await readdir(join(root, 'src'), { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
      const path = join(entry.parentPath, entry.name);
      if (WRITES.test(await readFile(path, 'utf8'))) writers.push(relative(root, path));
    }
    const sinkFiles = new Set(SINKS.map((sink) => sink.file));
    assert.deepEqual(
      writers.filter((file) => !sinkFiles.has(file) && !(file in NOT_SINKS)).sort(),
      [],
      'a file that writes bytes: add its sink to SINKS (masking/boundary.ts) with a driver in this test, or name it in NOT_SINKS with why',
    );
    assert.deepEqual(
      [...sinkFiles, ...Object.keys(NOT_SINKS)].filter((file) => !writers.includes(file)).sort(),
      [],
      'a file named here that writes nothing any more',
    );
  });

  it("a denial's cut is said once: denialMessage (boundary.ts), the only place of src/ that names CUTS.denialMessage", async () => {
    const root = fileURLToPath(new URL('../../', import.meta.url));
    const naming: string[] = [];
    for (const entry of await readdir(join(root, 'src'), { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
      const path = join(entry.parentPath, entry.name);
      if (/CUTS\.denialMessage\b/.test(await readFile(path, 'utf8'))) naming.push(relative(root, path));
    }
    assert.deepEqual(naming, ['src/masking/boundary.ts'], 'cut a denial with denialMessage() (masking/boundary.ts)');
    const message = `${'m'.repeat(990)}${SECRET}`;
    const masker = new Masker();
    masker.add(SECRET, 'key');
    assert.equal(denialMessage(masker, message), `${'m'.repeat(990)}…`);
  });
});
