// A real S3 server for tests: Ceph's radosgw (Debian 12's Ceph 16 packages radosgw, ceph-mon and ceph-osd) over a
// cluster of one monitor and one OSD on loopback, started by the tests as PostgreSQL is (test/support/pg.ts).
//
// Each server lives in its own temp dir (`<tmpdir>/captf-rgw-XXXXXX`): its ceph.conf, the monitor's data, the logs,
// the pid files and admin sockets. The OSD keeps its objects in memory (`memstore`), so nothing but the monitor's
// small store touches the disk. No cephx authentication (the cluster is reachable on 127.0.0.1 only), one replica
// per pool. radosgw itself still checks every request's AWS signature against the one user made at the start.
// Ceph's daemons run as whoever runs the tests, root included. Each runs in the foreground as a child of the test
// process, and is stopped by its pid and waited for: after the tests (useRadosgw's `after` hook), on a start that
// fails, when the process exits or is interrupted, and, for a test process that died by SIGKILL, by the next start
// (reapOrphanedServers). Starting takes about 15 s; each step is bounded, and a start that fails says which step
// and prints the end of every daemon's log.
//
// What makes the cluster start (found by trying; ceph.conf below):
// - `mon host` and the monmap give the monitor's address as `[v1:127.0.0.1:PORT]`: on a port other than the default
//   without the explicit v1 address the clients hang in authentication;
// - `osd max object name len` and `osd max object namespace len`: memstore's limits otherwise refuse radosgw's names;
// - `osd pool default size = 1`, `mon allow pool size one` and `osd crush chooseleaf type = 0`: one OSD serves every pool;
// - `osd crush update on start` and `osd class update on start` off: the start puts the OSD in the CRUSH map itself, and
//   the OSD's own update at its start failed 1 start in 4 ("mon_cmd_maybe_osd_create fail: 'wrong fsid'"; it exits).
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { runProcess } from './exec.ts';
import { isProcessRunning, processEnds } from './tf-modules.ts';
import { freeLoopbackPort, markOwner, reapOrphanedServers, releaseAtExit, stopAtExit } from './server-nets.ts';

const DIR_PREFIX = 'captf-rgw-';
/** What radosgw answers for any region: it has one zone group, and signatures name the region they were made for. */
export const RGW_REGION = 'us-east-1';
/** Every command of the start is bounded; radosgw's first answer (it makes its pools) by the longest. */
const STEP_TIMEOUT_MS = 60_000;
const RGW_ANSWER_TIMEOUT_MS = 90_000;
/** How long a daemon has to end after SIGTERM before it is SIGKILLed. */
const STOP_GRACE_MS = 10_000;
const DAEMONS = ['ceph-mon', 'ceph-osd', 'radosgw'] as const;

export interface RadosgwServer {
  /** `http://127.0.0.1:PORT`: path-style addressing only (no DNS names a bucket). */
  readonly endpoint: string;
  /** The temp dir holding ceph.conf, the monitor's data and every log; removed by stop(). */
  readonly dir: string;
  /** The S3 user's keys (radosgw-admin user create). */
  readonly credentials: { accessKeyId: string; secretAccessKey: string };
  /** Pids of the running daemons (ceph-mon, ceph-osd, radosgw), to check that none survive stop(). */
  processIds(): number[];
  /** SIGTERMs every daemon, waits for each to end (SIGKILL after a grace), removes the dir. Idempotent. */
  stop(): Promise<void>;
}

/**
 * One server for the tests of a suite (a test file when called at top level), started on the first call of the
 * function it returns and stopped by an `after` hook of that suite. Call at module level or in a describe().
 */
export function useRadosgw(): () => Promise<RadosgwServer> {
  let starting: Promise<RadosgwServer> | undefined;
  after(async () => {
    if (starting) await (await starting.catch(() => undefined))?.stop();
  });
  return () => (starting ??= startRadosgw());
}

interface Daemon {
  name: (typeof DAEMONS)[number];
  child: ChildProcess;
  /** Resolves when the daemon has exited (never rejects). */
  exited: Promise<void>;
}

/** Starts a cluster and its radosgw, and makes the S3 user. On any failure everything started is stopped first. */
async function startRadosgw(): Promise<RadosgwServer> {
  const missing = ['ceph-authtool', 'monmaptool', 'ceph', 'radosgw-admin', ...DAEMONS].filter(
    (name) => !(process.env.PATH ?? '').split(':').some((dir) => dir && existsSync(join(dir, name))),
  );
  if (missing.length)
    throw new Error(
      `radosgw cannot start: ${missing.join(', ')} not found on PATH. Install Ceph's packages: apt-get install radosgw ceph-mon ceph-osd (.ci/run does)`,
    );
  reapOrphanedServers(DIR_PREFIX, stopOrphan);
  for (let attempt = 1; ; attempt++) {
    const dir = await mkdtemp(join(tmpdir(), DIR_PREFIX));
    const daemons: Daemon[] = [];
    const stopNow = () => stopSync(dir, daemons);
    stopAtExit(stopNow);
    try {
      const server = await startIn(dir, daemons);
      let stopping: Promise<void> | undefined;
      return {
        ...server,
        processIds: () => daemons.filter((d) => d.child.pid && isProcessRunning(d.child.pid)).map((d) => d.child.pid!),
        stop: () =>
          (stopping ??= (async () => {
            releaseAtExit(stopNow);
            await stopDaemons(daemons);
            await rm(dir, { recursive: true, force: true });
          })()),
      };
    } catch (error) {
      const logs = await daemonLogs(dir);
      await stopDaemons(daemons);
      releaseAtExit(stopNow);
      rmSync(dir, { recursive: true, force: true });
      const failure = `radosgw did not start: ${(error as Error).message}\n${logs}`;
      // Once more, on other ports (one another process took between the probe and the bind) and in a new dir.
      if (attempt < 2) {
        console.error(`${failure}\n(starting again)`);
        continue;
      }
      throw new Error(failure, { cause: error });
    }
  }
}

async function startIn(dir: string, daemons: Daemon[]): Promise<Omit<RadosgwServer, 'processIds' | 'stop'>> {
  await markOwner(dir);
  for (const sub of ['mon', 'osd', 'rgw', 'run']) await mkdir(join(dir, sub));
  const [monPort, rgwPort] = [await freeLoopbackPort(), await freeLoopbackPort()];
  const fsid = randomUUID();
  const conf = join(dir, 'ceph.conf');
  await writeFile(conf, cephConf(dir, fsid, monPort, rgwPort));
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', CEPH_CONF: conf, HOME: dir };
  const step = async (what: string, file: string, args: string[]) => {
    const run = await runProcess(file, ['-c', conf, ...args], { env, timeoutMs: STEP_TIMEOUT_MS, cwd: dir });
    if (run.exitCode !== 0)
      throw new Error(
        `${what}: ${file} ${args.join(' ')} ${run.timedOut ? `did not end within ${STEP_TIMEOUT_MS} ms` : `failed (${run.exitCode ?? run.signal})`}: ${run.stderr.slice(-2000)}`,
      );
    return run.stdout;
  };
  const daemon = async (name: Daemon['name'], args: string[]) => {
    const out = await open(join(dir, `${name}.out`), 'a');
    try {
      // In the foreground (-f): a child of this process, its pid the daemon's, its end an event.
      const child = spawn(name, ['-f', '-c', conf, ...args], { env, cwd: dir, stdio: ['ignore', out.fd, out.fd] });
      const exited = new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.once('error', () => resolve());
      });
      daemons.push({ name, child, exited });
      return { exited };
    } finally {
      await out.close();
    }
  };
  /** Rejects when the daemon exits: raced against each later step, so a daemon that dies ends the start at once. */
  const running = (name: string, { exited }: { exited: Promise<void> }) => {
    const ended = exited.then(() => {
      throw new Error(`${name} exited during the start`);
    });
    ended.catch(() => {}); // once the start is over, a daemon's end is stop()'s business
    return ended;
  };

  const keyring = join(dir, 'mon.keyring');
  const monmap = join(dir, 'monmap');
  await step('the monitor keyring', 'ceph-authtool', [
    '--create-keyring',
    keyring,
    '--gen-key',
    '-n',
    'mon.',
    '--cap',
    'mon',
    'allow *',
  ]);
  await step('the monmap', 'monmaptool', [
    '--create',
    '--addv',
    'a',
    `[v1:127.0.0.1:${monPort}]`,
    '--fsid',
    fsid,
    monmap,
  ]);
  await step('the monitor store', 'ceph-mon', ['--mkfs', '-i', 'a', '--monmap', monmap, '--keyring', keyring]);
  const mon = running('ceph-mon', await daemon('ceph-mon', ['-i', 'a']));
  const during = <T>(work: Promise<T>) => Promise.race([work, mon]);
  const osdUuid = randomUUID();
  const osdId = (
    await during(step('the OSD id', 'ceph', ['--connect-timeout', '30', 'osd', 'create', osdUuid]))
  ).trim();
  if (osdId !== '0') throw new Error(`the monitor gave the OSD the id ${JSON.stringify(osdId)}, not 0`);
  await during(step('the OSD store', 'ceph-osd', ['--mkfs', '-i', '0', '--osd-uuid', osdUuid]));
  await during(step('the OSD in the CRUSH map', 'ceph', ['osd', 'crush', 'add', 'osd.0', '1.0', 'root=default']));
  const osd = running('ceph-osd', await daemon('ceph-osd', ['-i', '0']));
  const rgw = running('radosgw', await daemon('radosgw', ['-n', 'client.rgw.a']));
  const endpoint = `http://127.0.0.1:${rgwPort}`;
  await Promise.race([answers(endpoint, RGW_ANSWER_TIMEOUT_MS), mon, osd, rgw]);
  const credentials = {
    accessKeyId: `CAPTFRGW${randomBytes(6).toString('hex').toUpperCase()}`,
    secretAccessKey: randomBytes(20).toString('hex'),
  };
  await Promise.race([
    step('the S3 user', 'radosgw-admin', [
      'user',
      'create',
      '--uid',
      'captf-test',
      '--display-name',
      'captf-test',
      '--access-key',
      credentials.accessKeyId,
      '--secret',
      credentials.secretAccessKey,
    ]),
    mon,
    osd,
    rgw,
  ]);
  return { endpoint, dir, credentials };
}

function cephConf(dir: string, fsid: string, monPort: number, rgwPort: number): string {
  return `[global]
fsid = ${fsid}
mon host = [v1:127.0.0.1:${monPort}]
mon initial members = a
public addr = 127.0.0.1
ms bind ipv6 = false
auth cluster required = none
auth service required = none
auth client required = none
osd objectstore = memstore
memstore device bytes = 536870912
osd max object name len = 256
osd max object namespace len = 64
osd pool default size = 1
osd pool default min size = 1
osd crush chooseleaf type = 0
osd crush update on start = false
osd class update on start = false
mon allow pool size one = true
run dir = ${dir}/run
admin socket = ${dir}/run/$name.asok
pid file = ${dir}/run/$name.pid
log file = ${dir}/$name.log
[mon.a]
mon data = ${dir}/mon
[osd.0]
osd data = ${dir}/osd
[client.rgw.a]
rgw frontends = beast endpoint=127.0.0.1:${rgwPort}
rgw data = ${dir}/rgw
`;
}

/** Resolves once the endpoint answers HTTP at all (radosgw answers once its pools exist); rejects after `withinMs`. */
async function answers(endpoint: string, withinMs: number): Promise<void> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const answered = await new Promise<boolean>((resolve) => {
      const req = request(endpoint, { method: 'GET', timeout: 2_000 }, (res) => {
        res.resume();
        resolve(true);
      });
      req.once('timeout', () => req.destroy());
      req.once('error', () => resolve(false));
      req.end();
    });
    if (answered) return;
    if (Date.now() > deadline) throw new Error(`radosgw did not answer on ${endpoint} within ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** The end of every log of the server's dir (the daemons' own logs and what they printed), for a failure's message. */
async function daemonLogs(dir: string): Promise<string> {
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.log') || f.endsWith('.out'));
  } catch {
    return '';
  }
  const parts: string[] = [];
  for (const file of files.sort()) {
    const text = await readFile(join(dir, file), 'utf8').catch(() => '');
    if (text.trim()) parts.push(`--- ${file} (its end)\n${text.slice(-3000)}`);
  }
  return parts.join('\n');
}

/** SIGTERM every daemon still running and waits for each to end; SIGKILL one that outlives the grace. */
async function stopDaemons(daemons: readonly Daemon[]): Promise<void> {
  await Promise.all(
    daemons.map(async ({ child, exited }) => {
      if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
      child.kill('SIGTERM');
      const ended = await Promise.race([exited.then(() => true), sleep(STOP_GRACE_MS).then(() => false)]);
      if (!ended) {
        child.kill('SIGKILL');
        await exited;
      }
      await processEnds(child.pid);
    }),
  );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());

// ---- the nets under node:test hooks -----------------------------------------------------------

/** Synchronous so it can run in an `exit` handler: SIGKILL every daemon, then remove the dir. */
function stopSync(dir: string, daemons: readonly Daemon[]) {
  for (const { child } of daemons) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
}

/**
 * Stops the daemons of a server whose test process died without running its hooks (server-nets.ts): each daemon
 * named by a pid file of the dir and still running with the dir's ceph.conf on its command line, then the dir.
 */
function stopOrphan(dir: string) {
  const run = join(dir, 'run');
  for (const file of existsSync(run) ? readdirSync(run).filter((f) => f.endsWith('.pid')) : []) {
    const pid = Number(readFileSync(join(run, file), 'utf8'));
    let commandLine = '';
    try {
      commandLine = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue; // gone
    }
    if (!commandLine.includes(join(dir, 'ceph.conf'))) continue; // the pid is another process's now
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  rmSync(dir, { recursive: true, force: true });
}
