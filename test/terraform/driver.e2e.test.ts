// createTerraform with the processes it starts (node standing in for terraform): the environment rules of
// every command, the stop handle, what it keeps of stdout and stderr, onStart, and a binary that cannot
// start, the one buffer each of stdout and stderr is read into. Its argv and exit codes, without a process:
// driver.test.ts.
import { createHash } from 'node:crypto';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { initArgs } from '../../src/terraform/init.ts';
import { StopHandle } from '../../src/terraform/stop.ts';
import { createTerraform } from '../../src/terraform/terraform.ts';
import { terraformVersion } from '../../src/terraform/version.ts';
import { peakLiveGrowth } from '../support/live-memory.ts';
import { tempDir } from '../support/tf-modules.ts';

function nodeAs(stop: StopHandle, env?: NodeJS.ProcessEnv) {
  return createTerraform({ path: process.execPath, cwd: process.cwd(), env, output: { lines() {} }, stop });
}

describe('driver: createTerraform', () => {
  it('applies the environment rules to every command it starts', async () => {
    const tf = nodeAs(new StopHandle(), {
      PATH: process.env.PATH,
      TF_VAR_secret: 's',
      TF_CLI_ARGS: '-destroy',
      TF_LOG: 'trace',
      KEPT: 'yes',
    });
    const run = await tf.run('version', ['-e', 'process.stdout.write(JSON.stringify(process.env))'], {
      captureStdout: true,
    });
    assert.equal(run.meaning, 'ok');
    const env = JSON.parse(run.stdout) as Record<string, string>;
    assert.equal(env.KEPT, 'yes');
    assert.equal(env.TF_IN_AUTOMATION, '1');
    assert.equal(env.TF_INPUT, '0');
    for (const removed of ['TF_VAR_secret', 'TF_CLI_ARGS', 'TF_LOG']) assert.equal(env[removed], undefined, removed);
  });

  it("a stop handle reaches the terraform it started, and no other run's", async () => {
    const mine = new StopHandle();
    const other = new StopHandle();
    // Exits 0 only when it is not interrupted: it waits, and says when it got SIGINT.
    const script =
      "process.on('SIGINT', () => process.exit(42)); setTimeout(() => process.exit(0), 3000); process.stdout.write('ready\\n');";
    const started = (stop: StopHandle) => {
      let ready!: () => void;
      const isReady = new Promise<void>((resolve) => (ready = resolve));
      const tf = createTerraform({
        path: process.execPath,
        cwd: process.cwd(),
        output: { lines: (_s, texts) => void (texts.includes('ready') && ready()) },
        stop,
      });
      return { run: tf.run('version', ['-e', script]), isReady };
    };
    const a = started(mine);
    const b = started(other);
    await Promise.all([a.isReady, b.isReady]);
    const reached = mine.interrupt('graceful');
    assert.equal(reached.size, 1);
    const [ranA, ranB] = await Promise.all([a.run, b.run]);
    assert.equal(ranA.exitCode, 42, 'the interrupted one got one SIGINT');
    assert.equal(ranB.exitCode, 0, "the other run's terraform was not touched");
    assert.equal(mine.interrupt('graceful').size, 0, "a finished terraform is no longer the handle's");
  });

  it('says whether stderr was read whole or cut to its tail', async () => {
    const tf = nodeAs(new StopHandle());
    const small = await tf.run('version', ['-e', "process.stderr.write('Error: one line\\n'); process.exit(1)"]);
    assert.equal(small.stderrComplete, true);
    assert.equal(small.meaning, 'error');
    const large = await tf.run('version', [
      '-e',
      "for (let i = 0; i < 400; i++) process.stderr.write('x'.repeat(79) + '\\n'); process.stderr.write('the end\\n')",
    ]);
    assert.equal(large.stderrComplete, false);
    assert.match(large.stderrTail, /the end\n$/);
  });

  it('tells onStart once its process exists, before it ends (an apply may change things from then on)', async () => {
    const told: string[] = [];
    const tf = createTerraform({
      path: process.execPath,
      cwd: process.cwd(),
      output: { lines: (_s, texts) => void told.push(...texts) },
      stop: new StopHandle(),
    });
    await tf.run('apply', ['-e', "process.stdout.write('running\\n')"], { onStart: () => told.push('started') });
    assert.deepEqual(told, ['started', 'running']);
  });

  it('the version probe keeps a head of what the binary prints, never the whole: 40 MiB of it add no live memory', async (t) => {
    const MiB = 1024 * 1024;
    // A `terraform version` that names itself, prints 40 MiB more (more than any capture keeps), then waits a
    // second before it exits: what the driver holds of its output is live while the samples are taken.
    const binary = join(await tempDir(t), 'terraform');
    await writeFile(
      binary,
      `#!${process.execPath}\nprocess.stdout.write('Terraform v1.11.4\\n');\nconst line = 'x'.repeat(1023) + '\\n';\nfor (let i = 0; i < 40; i++) process.stdout.write(line.repeat(1024));\nsetTimeout(() => {}, 1000);\n`,
    );
    await chmod(binary, 0o755);
    const { value, growth } = await peakLiveGrowth(() => terraformVersion(binary, { stop: new StopHandle() }), 100);
    assert.deepEqual(value, { version: '1.11.4', flavor: 'terraform', path: binary });
    assert.ok(growth < 8 * MiB, `live memory grew ${Math.round(growth / MiB)} MiB while \`version\` printed 40 MiB`);
  });

  it('reads stdout and stderr into one buffer each: 16 MiB of each arrive whole, Buffers grow by under 1 MiB', async () => {
    const MiB = 1024 * 1024;
    // Both streams at once, in lines of 1 KiB; a line's number in it, so a byte lost or read twice shows.
    const script = `const line = (s, i) => s + String(i).padStart(8, '0') + 'x'.repeat(1014) + '\\n';
      let o = 0, e = 0;
      const out = () => { while (o < 16 * 1024) { if (!process.stdout.write(line('o', o++))) return process.stdout.once('drain', out); } };
      const err = () => { while (e < 16 * 1024) { if (!process.stderr.write(line('e', e++))) return process.stderr.once('drain', err); } };
      out(); err();`;
    let lines = 0;
    let expected = 0;
    const tf = createTerraform({
      path: process.execPath,
      cwd: process.cwd(),
      output: {
        lines: (_stream, texts) => {
          for (const text of texts) assert.equal(text, `e${String(expected++).padStart(8, '0')}${'x'.repeat(1014)}`);
          lines += texts.length;
        },
      },
      stop: new StopHandle(),
    });
    const before = process.memoryUsage().arrayBuffers;
    let peak = before;
    const poll = setInterval(() => (peak = Math.max(peak, process.memoryUsage().arrayBuffers)), 1);
    const buffers = new Set<ArrayBufferLike>();
    const hash = createHash('sha256');
    let bytes = 0;
    try {
      const run = await tf.run('show', ['-e', script], {
        consumeStdout: async (stdout) => {
          for await (const chunk of stdout) {
            buffers.add(chunk.buffer);
            hash.update(chunk);
            bytes += chunk.length;
          }
        },
      });
      assert.equal(run.exitCode, 0);
    } finally {
      clearInterval(poll);
    }
    const sent = createHash('sha256');
    for (let o = 0; o < 16 * 1024; o++) sent.update(`o${String(o).padStart(8, '0')}${'x'.repeat(1014)}\n`);
    assert.equal(bytes, 16 * MiB);
    assert.equal(hash.digest('hex'), sent.digest('hex'), "stdout's bytes whole and in order");
    assert.equal(buffers.size, 1, 'every chunk of stdout a view of one buffer');
    assert.equal(lines, 16 * 1024, 'every line of stderr');
    assert.ok(peak - before < MiB, `arrayBuffers grew ${peak - before} bytes while 32 MiB were read`);
  });

  it("a TMPDIR that cannot hold the sockets terraform's output is read through: WorkdirUnusable naming it, terraform never started", async (t) => {
    const dir = await tempDir(t);
    const before = process.env.TMPDIR;
    let started = false;
    try {
      for (const tmp of [join(dir, 'missing'), join(dir, 'x'.repeat(100))]) {
        if (tmp.endsWith('x')) await mkdir(tmp);
        process.env.TMPDIR = tmp;
        await assert.rejects(
          nodeAs(new StopHandle()).run('version', ['-e', '0'], { onStart: () => (started = true) }),
          (e: Error & { reason?: string; kind?: string }) => {
            assert.equal(e.kind, 'io');
            assert.equal(e.reason, 'WorkdirUnusable');
            assert.ok(e.message.includes(tmp), e.message);
            assert.match(e.message, /give the runner a writable TMPDIR with a short path/);
            return true;
          },
        );
      }
    } finally {
      if (before === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = before;
    }
    assert.equal(started, false);
  });

  it('a binary that cannot start is an image problem naming the command, and never started', async () => {
    const tf = createTerraform({
      path: '/nonexistent/terraform',
      cwd: process.cwd(),
      output: { lines() {} },
      stop: new StopHandle(),
    });
    let started = false;
    await assert.rejects(
      tf.run('init', initArgs(), { onStart: () => (started = true) }),
      (e: Error & { reason?: string }) => {
        assert.equal(e.reason, 'ImageInvalid');
        assert.match(e.message, /could not run \/nonexistent\/terraform init/);
        return true;
      },
    );
    assert.equal(started, false);
  });
});
