// The inputs of a run, read once: hashes, what the workdir gets, and the secret values to mask.
import {
  computeHashes,
  readInputs,
  secretValues,
  terraformVarFiles,
  varFileOf,
  type InputsHashes,
  type InputsSnapshot,
} from './index.ts';
import type { ObjectKind } from '../object-kind.ts';
import type { Masker } from '../masking/mask.ts';
import type { Notice } from '../schemas/result.ts';
import { unreadVariablesFiles } from './unused.ts';
import type { WorkspaceInputs } from '../workspace/workspace.ts';

export interface LoadedInputs {
  snapshot: InputsSnapshot;
  hashes: InputsHashes;
  workspaceInputs: WorkspaceInputs;
  /** Values of sensitive.tfvars.json, each with the variable it is in: masked from the first byte. */
  upfrontSecrets: { value: string; variable: string }[];
  /** Input files named like variables files the runner does not read (unused.ts). */
  notices: Notice[];
  /** Once the module or the plan says which variables are sensitive (or ephemeral, or passed to a module's sensitive variable: `why`), mask their values too. */
  maskSensitiveVariables(names: readonly string[], masker: Masker, why?: string): void;
}

export async function loadInputs(dir: string, options: { image: string; kind: ObjectKind }): Promise<LoadedInputs> {
  const snapshot = await readInputs(dir);
  const hashes = computeHashes({
    image: options.image,
    kind: options.kind,
    variables: snapshot.variables,
    files: snapshot.files,
  });
  // Canonical text, not the original bytes: what terraform reads is then a function of the hash.
  const varFiles = terraformVarFiles(snapshot).map(({ name, content }) => ({
    name,
    content: Buffer.from(content, 'utf8'),
  }));
  return {
    snapshot,
    hashes,
    workspaceInputs: {
      varFiles,
      files: [...snapshot.files].map(([name, content]) => ({ name, content: Buffer.from(content) })),
      sensitiveVariables: [...snapshot.sensitiveVariableNames].sort(),
      varFileOf: (names) => {
        const content = varFileOf(snapshot, names);
        return content === undefined ? undefined : Buffer.from(content, 'utf8');
      },
    },
    upfrontSecrets: secretValues(snapshot),
    notices: unreadVariablesFiles(snapshot.files.keys()),
    maskSensitiveVariables(names, masker, why = 'the module declares it sensitive') {
      for (const { value, variable } of secretValues({
        variables: snapshot.variables,
        sensitiveVariableNames: new Set(names),
      }))
        masker.add(value, `variable "${variable}" (${why})`);
    },
  };
}
