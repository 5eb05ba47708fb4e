// The workdir itself: a 0700 dir with a private dir for secret material, the saved plan held open
// in it, and its removal at the end of the run.
import { chmod, lstat, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { RunnerError } from '../errors.ts';
import { makeDirs } from '../util/mkdirs.ts';
import { HeldPlanFile } from './plan-file.ts';
import { PLAN_FILE } from './terraform-files.ts';

export interface Workdir {
  dir: string;
  planFile: string;
  /** A 0700 dir for files that may hold secrets (state copies, plan files). */
  privateDir: string;
  /** Opens the saved plan (planFile) and holds it until releasePlan or dispose: from its hash to its apply, terraform reads that very file. */
  holdPlan(): Promise<HeldPlanFile>;
  /** The plan holdPlan opened, while it is held. */
  heldPlan(): HeldPlanFile | undefined;
  /** Closes the held plan and removes the plan file: secret material does not outlive the run. */
  releasePlan(): Promise<void>;
  /** Removes the workdir when the runner made it (its private dir otherwise), unless keep() was called. */
  dispose(): Promise<void>;
  /** Leaves the workdir in place: it holds state that could not be saved anywhere else. */
  keep(): void;
}

/** The workdir itself, 0700, with its private dir for secret material; removed at the end when the runner made it. */
export async function makeWorkdir(given: string | undefined): Promise<Workdir> {
  let dir = given === undefined ? undefined : resolve(given);
  try {
    dir ??= await mkdtemp(join(tmpdir(), 'captf-runner-'));
    await makeDirs(dir, 0o700);
    await chmod(dir, 0o700);
    await makeDirs(join(dir, 'private'), 0o700);
    await ownPrivateDir(join(dir, 'private'));
  } catch (error) {
    throw new RunnerError({
      kind: 'io',
      reason: 'WorkdirUnusable',
      message: `the workdir ${dir ?? tmpdir()} cannot be used (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}): give the runner a writable --workdir (an emptyDir volume in a Job) or TMPDIR`,
      cause: error,
    });
  }
  return makeWorkdirIn(dir, given === undefined);
}

/**
 * The private dir holds the plan file and the secret var files: in a --workdir someone else
 * prepared, it must be a real directory of the runner's own, and only the runner may enter it.
 */
async function ownPrivateDir(path: string): Promise<void> {
  const found = await lstat(path);
  if (!found.isDirectory()) throw new Error(`${path} is a symbolic link or not a directory`);
  if (process.getuid && found.uid !== process.getuid())
    throw new Error(`${path} belongs to uid ${found.uid}, not to the runner`);
  await chmod(path, 0o700);
  // What an earlier run left (killed before it cleaned up): the runner creates its files here afresh.
  for (const name of await readdir(path)) await rm(join(path, name), { recursive: true, force: true });
}

function makeWorkdirIn(dir: string, owned: boolean): Workdir {
  const privateDir = join(dir, 'private');
  const planFile = join(privateDir, PLAN_FILE);
  let kept = false;
  let held: HeldPlanFile | undefined;
  const releasePlan = async () => {
    await held?.close();
    held = undefined;
    await rm(planFile, { force: true });
  };
  return {
    dir,
    privateDir,
    planFile,
    holdPlan: async () => {
      await held?.close();
      held = await HeldPlanFile.open(planFile);
      return held;
    },
    heldPlan: () => held,
    releasePlan,
    keep: () => {
      kept = true;
    },
    dispose: async () => {
      await held?.close();
      held = undefined;
      if (kept) return;
      if (owned) await rm(dir, { recursive: true, force: true });
      else await rm(privateDir, { recursive: true, force: true });
    },
  };
}
