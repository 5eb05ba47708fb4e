// The local object: what a TerraformCluster, TerraformMachine or TerraformMachinePool is in a
// cluster, kept in one directory on a laptop. object.json holds metadata, spec and annotations. Its
// status is not stored: it is derived from the history of runs (history.ts), so it can never
// disagree with what actually ran, even when a reconcile was killed half way.
//
//   <dir>/object.json        metadata, spec, annotations
//   <dir>/inputs/            the current inputs (what `local set` edits)
//   <dir>/durable-inputs/    the inputs of the last successful apply (the durable inputs Secret)
//   <dir>/pinned-module/     the module of the last successful apply (what the pinned digest runs)
//   <dir>/state/terraform.tfstate, <dir>/backups/
//   <dir>/runs/0001-apply/   one dir per run: run.json, snapshot.json, inputs/, module/, result.json, runner.log
import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import * as z from '../schemas/zod.ts';
import type { ObjectKind } from '../object-kind.ts';
import { Kind } from '../schemas/result.ts';
import { RunnerError, usageError } from '../errors.ts';
import { STATE_FILE } from '../workspace/terraform-files.ts';

export const LOCAL_OBJECT_API_VERSION = 'local.captf.io/v1';
export const APPROVE_DESTRUCTIVE_PLAN = 'captf.io/approve-destructive-plan';

const Time = z.iso.datetime();

export const DriftSpec = z.strictObject({
  intervalSeconds: z.number().int().positive(),
  action: z.enum(['Report', 'Remediate']),
  remediationFailedLimit: z.nonNegativeInt(),
});
export type DriftSpec = z.infer<typeof DriftSpec>;

export const LocalObject = z.strictObject({
  apiVersion: z.literal(LOCAL_OBJECT_API_VERSION),
  metadata: z.strictObject({
    name: z.string().min(1),
    uid: z.string().min(1).describe('Seeds the schedule jitter, as the Kubernetes UID does'),
    creationTimestamp: Time,
    deletionTimestamp: Time.optional().describe('Set by `local delete`'),
    annotations: z.record(z.string(), z.string()),
  }),
  spec: z.strictObject({
    kind: Kind,
    image: z.string().min(1).describe('The image reference: part of the inputs hash, as in a cluster'),
    module: z.string().min(1).describe('Absolute path of the module dir: what the image carries at /captf/module'),
    drift: DriftSpec,
  }),
});
export type LocalObject = z.infer<typeof LocalObject>;

export interface LocalPaths {
  /** The dir as the author gave it: what messages and hints show. */
  given: string;
  dir: string;
  objectFile: string;
  inputs: string;
  durableInputs: string;
  pinnedModule: string;
  stateFile: string;
  backups: string;
  runs: string;
  /** Present while a run is in progress: the local stand-in for an active Job. */
  activeRun: string;
}

export function localPaths(dir: string): LocalPaths {
  const root = resolve(dir);
  return {
    given: dir,
    dir: root,
    objectFile: join(root, 'object.json'),
    inputs: join(root, 'inputs'),
    durableInputs: join(root, 'durable-inputs'),
    pinnedModule: join(root, 'pinned-module'),
    stateFile: join(root, 'state', STATE_FILE),
    backups: join(root, 'backups'),
    runs: join(root, 'runs'),
    activeRun: join(root, 'active-run'),
  };
}

/** The object in `dir`, and where its files are. */
export async function openObject(dir: string): Promise<{ paths: LocalPaths; object: LocalObject }> {
  const paths = localPaths(dir);
  return { paths, object: await loadObject(paths) };
}

export async function loadObject(paths: LocalPaths): Promise<LocalObject> {
  let text: string;
  try {
    text = await readFile(paths.objectFile, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    throw usageError(
      'LocalObjectMissing',
      `there is no local object in ${paths.given}: create one with captf-runner local init --dir ${paths.given} --module DIR --image REF`,
    );
  }
  const parsed = LocalObject.safeParse(JSON.parse(text));
  if (!parsed.success) {
    throw usageError(
      'LocalObjectInvalid',
      `${paths.objectFile} is not a valid local object (${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}): fix it or create the object again`,
    );
  }
  return parsed.data;
}

/** Written to a temp file and renamed, so a reader never sees half an object. */
export async function saveObject(paths: LocalPaths, object: LocalObject): Promise<void> {
  const temp = `${paths.objectFile}.tmp`;
  await writeFile(temp, JSON.stringify(LocalObject.parse(object), null, 2) + '\n');
  await rename(temp, paths.objectFile);
}

export interface NewObject {
  name: string;
  kind: ObjectKind;
  image: string;
  module: string;
  drift: DriftSpec;
  now: Date;
}

/** Creates the object and its empty dirs; refuses to overwrite an object that exists. */
export async function createObject(paths: LocalPaths, spec: NewObject): Promise<LocalObject> {
  await mkdir(paths.dir, { recursive: true });
  const object: LocalObject = {
    apiVersion: LOCAL_OBJECT_API_VERSION,
    metadata: { name: spec.name, uid: randomUUID(), creationTimestamp: spec.now.toISOString(), annotations: {} },
    spec: { kind: spec.kind, image: spec.image, module: resolve(spec.module), drift: spec.drift },
  };
  try {
    await writeFile(paths.objectFile, JSON.stringify(object, null, 2) + '\n', { flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    throw usageError(
      'LocalObjectExists',
      `${paths.given} already holds a local object: use another --dir, or delete it first (captf-runner local delete, then local reconcile)`,
    );
  }
  await mkdir(paths.inputs, { recursive: true });
  // No state dir: the first apply starts it (--new-state); without one, a lost state dir is refused.
  await mkdir(paths.runs, { recursive: true });
  return object;
}

/**
 * Dropping the finalizer: the object is gone. Only the entries this tool made are removed (the
 * --dir may be a directory the author keeps other things in), then the dir itself if empty. The
 * state backups stay: the one way back to what was destroyed. Returns whether any were kept.
 */
export async function removeObject(paths: LocalPaths): Promise<boolean> {
  const owned = [
    paths.objectFile,
    paths.inputs,
    paths.durableInputs,
    paths.pinnedModule,
    join(paths.stateFile, '..'),
    paths.runs,
    paths.activeRun,
  ];
  for (const entry of owned) await rm(entry, { recursive: true, force: true });
  const backupsKept = (await readdir(paths.backups).catch(() => [])).length > 0;
  if (!backupsKept) await rm(paths.backups, { recursive: true, force: true });
  await rmdir(paths.dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOTEMPTY' && error.code !== 'ENOENT')
      throw new RunnerError({
        kind: 'io',
        reason: 'LocalObjectRemoveFailed',
        message: `could not remove ${paths.dir}: ${error.message}`,
      });
  });
  return backupsKept;
}
