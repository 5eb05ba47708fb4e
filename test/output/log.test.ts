// The runner's own log: its writer against a log reader that stops reading (a stalled kubelet or
// collector), and its lines: JSON records masked value by value, terraform's lines records of their own.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, logTerraformLine, logWriter, TERRAFORM_LINE_PREFIX, type Logger } from '../../src/output/log.ts';
import { MASK, Masker } from '../../src/masking/mask.ts';

describe('output: the log writer', () => {
  it('a reader that does not read holds a log line up for about a second, then the line is dropped', async (t) => {
    // `sleep` never reads its stdin: a pipe nobody drains, non-blocking on this side as stderr is.
    const sleeper = spawn('sleep', ['60'], { stdio: ['pipe', 'ignore', 'ignore'] });
    t.after(() => sleeper.kill('SIGKILL'));
    const fd = (sleeper.stdin as unknown as { _handle: { fd: number } })._handle.fd;
    const filler = Buffer.alloc(64 * 1024, 'x');
    for (let full = false; !full; ) {
      try {
        writeSync(fd, filler);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
        full = true;
      }
    }
    const writer = logWriter(fd, (line) => line);
    const started = Date.now();
    await new Promise<void>((resolve, reject) =>
      writer.write('{"msg":"stopping terraform"}\n', (error) => (error ? reject(error) : resolve())),
    );
    const took = Date.now() - started;
    // Signals and the deadline wait while a log line waits: never as long as the reader stalls.
    assert.ok(took >= 900 && took < 10_000, `the line held the runner up for ${took} ms`);
  });
});

async function logged(
  format: 'json' | 'pretty',
  secrets: string[],
  write: (log: Logger, masker: Masker) => void,
): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'captf-log-'));
  try {
    const file = join(dir, 'log');
    const fd = openSync(file, 'w');
    const masker = new Masker();
    for (const secret of secrets) masker.add(secret, 'a value in sensitive.tfvars.json');
    write(await createLogger(format, masker, { op: 'apply', object: 'demo', namespace: null }, fd), masker);
    closeSync(fd);
    return await readFile(file, 'utf8');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('output: the log lines', () => {
  it('JSON: masked value by value, never as text: "null" and "apply" as secrets leave every line JSON, its own fields as they are', async () => {
    const text = await logged('json', ['null', 'apply', 'true'], (log, masker) => {
      log.info(
        { step: 'apply', outcome: 'succeeded', detail: { said: 'apply it', when: null, ok: true } },
        'apply: started',
      );
      logTerraformLine(
        log,
        { command: 'plan', step: 'plan' },
        '{"level":30,"outcome":"succeeded","msg":"run finished"} \u202e\x85',
      );
      masker.add('demo', 'a value learned late');
      log.warn('true or null');
    });
    assert.ok(!/[\u0085\u202e]/.test(text), 'no bidirectional or C1 character raw');
    const [runner, terraform, late] = text
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.deepEqual(runner, {
      ...runner,
      op: 'apply',
      object: 'demo',
      namespace: null,
      step: 'apply',
      outcome: 'succeeded',
      msg: `${MASK}: started`,
      detail: { said: `${MASK} it`, when: null, ok: true },
    });
    assert.equal(terraform!.outcome, undefined, "terraform's line is its message, never the record's fields");
    assert.deepEqual(terraform, {
      ...terraform,
      source: 'terraform',
      command: 'plan',
      stream: 'stderr',
      step: 'plan',
      msg: '{"level":30,"outcome":"succeeded","msg":"run finished"} \u202e\x85',
    });
    assert.deepEqual(
      [late!.object, late!.msg],
      [MASK, `${MASK} or ${MASK}`],
      'masked with what the masker knows when the line is written',
    );
  });

  it("pretty: terraform's lines as on stdout (prefixed), the runner's each on one line; no control character raw", async () => {
    const text = await logged('pretty', [], (log) => {
      log.info({ step: 'plan' }, 'plan: started\n[00:00:00.000] INFO: run finished');
      logTerraformLine(log, { command: 'plan', step: 'plan' }, 'Error: \x1b[31mred\x07\r');
    });
    const lines = text.trimEnd().split('\n');
    assert.match(lines[0]!, /^\[[\d:.]+\] INFO: plan: started\\n\[00:00:00\.000\] INFO: run finished$/);
    assert.equal(lines.at(-1), `${TERRAFORM_LINE_PREFIX}Error: \\x1b[31mred\\x07\\r`);
    assert.ok(!/[\x00-\x08\x0b-\x1f]/.test(text));
  });

  it('pretty: a progress record is one line, its message (its fields stay in the JSON log); a warning or an error keeps its fields', async () => {
    const text = await logged('pretty', [], (log) => {
      log.info({ step: 'plan', durationMs: 12, exitCode: 2 }, 'plan: done (exitCode 2: changes present)');
      log.warn({ address: 'terraform_data.a' }, 'approved without review: terraform_data.a (delete)');
    });
    const lines = text.trimEnd().split('\n');
    assert.match(lines[0]!, /^\[[\d:.]+\] INFO: plan: done \(exitCode 2: changes present\)$/);
    assert.match(lines[1]!, /^\[[\d:.]+\] WARN: approved without review: terraform_data\.a \(delete\)$/);
    assert.match(lines[2]!, /^ {4}address: "terraform_data\.a"$/);
    assert.equal(lines.length, 3, text);
    const json = await logged('json', [], (log) => log.info({ step: 'plan', durationMs: 12 }, 'plan: done'));
    assert.match(json, /"step":"plan","durationMs":12/, 'the JSON log keeps every field');
  });
});
