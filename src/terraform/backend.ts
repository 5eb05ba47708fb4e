// Which backend `terraform init` configured in a working directory. terraform applies a saved plan
// to the backend recorded in the plan, whatever the working directory says, so a plan artifact is
// bound to this identity: applied anywhere else it would change another object's state.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RunnerError } from '../errors.ts';
import { canonicalJson, type JsonValue } from '../inputs/canonical.ts';
import { parseExactJson } from '../inputs/json.ts';
import { sha256Hex } from '../util/digest.ts';
import type { Terraform } from './terraform.ts';

/** Written by init; the runner strips TF_DATA_DIR, so it is always under .terraform. */
const BACKEND_RECORD = join('.terraform', 'terraform.tfstate');

/**
 * sha256 of the canonical JSON of `{"config":…,"type":…}` as init recorded them. Only a digest:
 * the config can hold credentials (a pg conn_str).
 */
export async function backendIdentity(tf: Terraform): Promise<string> {
  const path = join(tf.cwd, BACKEND_RECORD);
  let backend: JsonValue | undefined;
  try {
    const record = parseExactJson(await readFile(path));
    backend = record instanceof Map ? record.get('backend') : undefined;
  } catch (error) {
    throw backendUnknown(`${path} cannot be read (${(error as Error).message})`);
  }
  if (!(backend instanceof Map)) throw backendUnknown(`${path} names no backend`);
  const identity = new Map([
    ['config', backend.get('config') ?? null],
    ['type', backend.get('type') ?? null],
  ]);
  return sha256Hex(canonicalJson(identity));
}

const backendUnknown = (problem: string) =>
  new RunnerError({ kind: 'terraform', reason: 'BackendUnknown', message: `the backend terraform init configured is unknown: ${problem}. Run the op again; report it if it persists.` });
