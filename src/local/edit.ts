// The commands that edit the local object, as a person edits a CAPTF object with kubectl: create
// it, change its inputs or spec, approve a blocked apply, delete it. None of them runs terraform;
// the next `local reconcile` acts on the change.
import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import type { ObjectKind } from '../object-kind.ts';
import { usageError } from '../errors.ts';
import { objectNameProblem } from '../util/kube-names.ts';
import {
  canonicalJson,
  JsonSyntaxError,
  NegativeZeroError,
  parseExactJson,
  readInputs,
  SENSITIVE_TFVARS_FILE,
  TFVARS_FILE,
  type JsonObject,
  type JsonValue,
} from '../inputs/index.ts';
import { loadInputs } from '../inputs/load.ts';
import { deriveStatus, readHistory } from './history.ts';
import {
  APPROVE_DESTRUCTIVE_PLAN,
  createObject,
  localPaths,
  openObject,
  saveObject,
  type DriftSpec,
  type LocalObject,
  type LocalPaths,
} from './object.ts';
import { approvedLines, say } from './print.ts';

export interface InitOptions {
  module: string;
  image: string;
  kind: ObjectKind;
  name?: string;
  inputs?: string;
  drift: DriftSpec;
}

export async function initObject(dir: string, options: InitOptions): Promise<void> {
  await checkModuleDir(options.module);
  const paths = localPaths(dir);
  const name = options.name ?? basename(options.module);
  // Every op takes the object's name as --object: a Kubernetes name, as a CAPTF object's is.
  const problem = objectNameProblem(name);
  if (problem)
    throw usageError(
      'UsageInvalid',
      `${problem}: give the object another name (--name)${options.name ? '' : ", the module directory's is not one"}`,
    );
  const object = await createObject(paths, {
    ...options,
    name,
    now: new Date(),
  });
  if (options.inputs) await replaceInputs(paths, options.inputs);
  say(
    `created ${object.spec.kind} ${object.metadata.name} in ${paths.given}: image ${object.spec.image}, module ${object.spec.module}`,
  );
  say(`inputs hash: ${await currentInputsHash(paths, object)}`);
  say(`next: captf-runner local reconcile --dir ${paths.given}`);
}

/** A --module that is no directory is refused before the object changes: every reconcile would fail on it. */
async function checkModuleDir(module: string): Promise<void> {
  const found = await stat(module).catch(() => undefined);
  if (!found?.isDirectory())
    throw usageError(
      'LocalModuleMissing',
      `--module ${module} ${found ? 'is no directory' : 'does not exist'}: give the module dir (the one that holds its .tf files)`,
    );
}

export interface SetOptions {
  /** NAME=VALUE edits of terraform.tfvars.json; VALUE is JSON when it parses as JSON, else a string. */
  assignments: string[];
  /** A variable of sensitive.tfvars.json, its value read from `readSecret` (stdin): never on the command line, where shell history and `ps` keep it. */
  sensitive?: string;
  readSecret?: () => Promise<string>;
  inputs?: string;
  image?: string;
  module?: string;
  driftIntervalSeconds?: number;
  driftAction?: DriftSpec['action'];
}

export async function setObject(dir: string, options: SetOptions): Promise<void> {
  if (options.module !== undefined) await checkModuleDir(options.module);
  const { paths, object } = await openObject(dir);
  const hashBefore = await currentInputsHash(paths, object);
  if (options.inputs) await replaceInputs(paths, options.inputs);
  if (options.assignments.length > 0) await assignVariables(paths, TFVARS_FILE, options.assignments.map(assignment));
  if (options.sensitive !== undefined) {
    if (!VARIABLE_NAME.test(options.sensitive))
      throw usageError(
        'AssignmentInvalid',
        `--sensitive takes a variable name (its value is read from stdin), not "${options.sensitive}"`,
      );
    const value = (await options.readSecret!()).replace(/\r?\n$/, '');
    if (value === '')
      throw usageError(
        'AssignmentInvalid',
        `no value for ${options.sensitive} on stdin: pipe it in, e.g. captf-runner local set --sensitive ${options.sensitive} < token.txt`,
      );
    await assignVariables(paths, SENSITIVE_TFVARS_FILE, [[options.sensitive, jsonOrString(options.sensitive, value)]]);
  }
  const { spec } = object;
  if (options.image !== undefined) spec.image = options.image;
  if (options.module !== undefined) spec.module = resolve(options.module);
  if (options.driftIntervalSeconds !== undefined) spec.drift.intervalSeconds = options.driftIntervalSeconds;
  if (options.driftAction !== undefined) spec.drift.action = options.driftAction;
  await saveObject(paths, object);
  const hashAfter = await currentInputsHash(paths, object);
  say(
    hashAfter === hashBefore ? `inputs hash unchanged: ${hashAfter}` : `inputs hash: ${hashAfter} (was ${hashBefore})`,
  );
}

/** Sets the approval annotation to the hash the newest apply was blocked for, as `kubectl annotate` would. */
export async function approveBlockedApply(dir: string): Promise<void> {
  const { paths, object } = await openObject(dir);
  const history = await readHistory(paths);
  const blocked = deriveStatus(history).blockedApply;
  if (!blocked)
    throw usageError(
      'NothingBlocked',
      `no apply of ${paths.given} is blocked: there is nothing to approve (captf-runner local status --dir ${paths.given} shows the runs)`,
    );
  object.metadata.annotations[APPROVE_DESTRUCTIVE_PLAN] = blocked.hash;
  await saveObject(paths, object);
  say(`approved: ${APPROVE_DESTRUCTIVE_PLAN}=${blocked.hash} (the apply blocked in run ${blocked.run})`);
  say(...approvedLines(history.find((run) => run.record.id === blocked.run)?.result));
  say(`next: captf-runner local reconcile --dir ${paths.given}`);
}

/** Sets the deletion timestamp; the finalizer keeps the object until a reconcile has destroyed what it built. */
export async function deleteObject(dir: string): Promise<void> {
  const { paths, object } = await openObject(dir);
  object.metadata.deletionTimestamp ??= new Date().toISOString();
  await saveObject(paths, object);
  say(
    `deletion requested at ${object.metadata.deletionTimestamp}: the next reconcile destroys, the one after drops the finalizer`,
  );
}

async function currentInputsHash(paths: LocalPaths, object: LocalObject): Promise<string> {
  return (await loadInputs(paths.inputs, { image: object.spec.image, kind: object.spec.kind })).hashes.inputsHash;
}

/** The inputs dir becomes a copy of `from` (a plain dir or a Kubernetes volume layout), checked as the runner reads it. */
async function replaceInputs(paths: LocalPaths, from: string): Promise<void> {
  const inputs = await readInputs(from);
  await rm(paths.inputs, { recursive: true, force: true });
  await mkdir(paths.inputs, { recursive: true });
  if (inputs.tfvarsJson) await writeFile(join(paths.inputs, TFVARS_FILE), inputs.tfvarsJson);
  if (inputs.sensitiveTfvarsJson)
    await writeFile(join(paths.inputs, SENSITIVE_TFVARS_FILE), inputs.sensitiveTfvarsJson, { mode: 0o600 });
  for (const [name, bytes] of inputs.files) await writeFile(join(paths.inputs, name), bytes);
}

const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** NAME=VALUE as a variable and its value (JSON when it parses as JSON, else a string). */
function assignment(text: string): [string, JsonValue] {
  const match = /^([A-Za-z_][A-Za-z0-9_-]*)=(.*)$/s.exec(text);
  if (!match)
    throw usageError(
      'AssignmentInvalid',
      `"${text}" is not NAME=VALUE: name a module variable, e.g. cluster_name=demo or replicas=3`,
    );
  return [match[1]!, jsonOrString(match[1]!, match[2]!)];
}

/** Sets variables in `file` (terraform.tfvars.json or sensitive.tfvars.json), moving each out of the other file: a variable set in both is refused. */
async function assignVariables(
  paths: LocalPaths,
  file: typeof TFVARS_FILE | typeof SENSITIVE_TFVARS_FILE,
  assignments: readonly [string, JsonValue][],
): Promise<void> {
  // readInputs checks each file is one JSON object (with a message that says how to fix it).
  const { tfvarsJson, sensitiveTfvarsJson } = await readInputs(paths.inputs);
  const [own, other] = file === TFVARS_FILE ? [tfvarsJson, sensitiveTfvarsJson] : [sensitiveTfvarsJson, tfvarsJson];
  const otherFile = file === TFVARS_FILE ? SENSITIVE_TFVARS_FILE : TFVARS_FILE;
  const variables = new Map(own ? (parseExactJson(own) as JsonObject) : []);
  const otherVariables = new Map(other ? (parseExactJson(other) as JsonObject) : []);
  for (const [name, value] of assignments) {
    variables.set(name, value);
    otherVariables.delete(name);
  }
  const mode = (name: string) => (name === SENSITIVE_TFVARS_FILE ? 0o600 : 0o644);
  // Canonical JSON keeps every number's digits exactly, which JSON.stringify would not.
  await writeFile(join(paths.inputs, file), canonicalJson(variables) + '\n', { mode: mode(file) });
  if (other)
    await writeFile(join(paths.inputs, otherFile), canonicalJson(otherVariables) + '\n', { mode: mode(otherFile) });
}

function jsonOrString(name: string, text: string): JsonValue {
  try {
    return parseExactJson(Buffer.from(text, 'utf8'));
  } catch (error) {
    if (error instanceof JsonSyntaxError) return text;
    if (error instanceof NegativeZeroError)
      throw usageError(
        'AssignmentInvalid',
        `${name}=${text} holds a negative zero (${error.literal}): terraform keeps its sign, so it would render differently from 0; write 0`,
      );
    throw error;
  }
}
