// The entry of the startup snapshot's bundle (dist/snapshot/captf-runner.cjs, CommonJS: scripts/build/build.mjs).
// `node --snapshot-blob BLOB --build-snapshot` runs it once and saves the heap it leaves; a run of
// `node --snapshot-blob BLOB captf-runner.mjs ARGS` restores that heap and starts main.ts's run, the
// same code as the bundle's with the start already done: every module an op loads before its first
// terraform spawn evaluated, the command line and the settings' schemas built and parsed once (BENCHMARKS.md, start).
// The snapshot must be built by the node binary that runs it (node refuses another's blob).
//
// While it is built nothing may touch stdio, read the environment, open a handle or keep a timer:
// what it reads would be the build's, not the run's. The warm-up below parses settings from an empty
// environment and keeps nothing of what it returns; what pino reads of the process as it loads is read
// at its first use in this bundle (scripts/build/build-snapshot.mjs). One read is kept: execa's colours
// (yoctocolors) are decided from the build's environment, none, and the runner never asks for them.
import { startupSnapshot } from 'node:v8';
import { parseCommandLine } from './cli.ts';
import './main.ts';
// Loaded by main.ts only for an op: evaluated now, into the heap the snapshot keeps.
import './op-main.ts';
import { OPS } from './ops/index.ts';
import { loadSettings } from './schemas/config.ts';
import { Op } from './schemas/result.ts';
import { warmReader } from './warm-reader.ts';

async function warmStart(): Promise<void> {
  // The command line's program built and an op's command line parsed, its result dropped: commander's code a run
  // takes first is compiled in the heap the snapshot keeps (a run's start ×0.96–0.98: bench/HISTORY.md, issue 44).
  await parseCommandLine(['node', 'captf-runner', 'apply', '--kind', 'cluster']);
  for (const op of Op.options) {
    await OPS[op]();
    try {
      loadSettings(op, {}, {});
    } catch {
      // an op whose settings need a flag: the parse ran up to the refusal, which is all the warm-up needs
    }
  }
  await warmReader();
}

void warmStart();

// node keeps process.pid in the heap it saves and sets it afresh in every run: saved as one constant,
// the blob is the same bytes whatever PID its builder had (a build step's PID varies: BENCHMARKS.md,
// the reproducibility row).
startupSnapshot.addSerializeCallback(() => Object.defineProperty(process, 'pid', { value: 0 }));
