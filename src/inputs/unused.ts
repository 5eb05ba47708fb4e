// Inputs that silently do nothing (pure): a variable the module does not declare (terraform only
// warns, and its advice to set TF_VAR_… does not apply to the runner), and a file named like a
// variables file the runner does not pass terraform (it reaches the module as captf-inputs/<name> only).
import type { Notice } from '../schemas/result.ts';
import { MODULE_INPUTS_DIR, SENSITIVE_TFVARS_FILE, TFVARS_FILE, type InputsSnapshot } from './snapshot.ts';

/** One notice per variable in the inputs that `declared` (the module's root variables) lacks, in name order. */
export function undeclaredVariables(snapshot: Pick<InputsSnapshot, 'variables' | 'sensitiveVariableNames'>, declared: readonly string[]): Notice[] {
  const known = new Set(declared);
  const similar = new Map(declared.map((name) => [looseName(name), name]));
  return [...snapshot.variables.keys()]
    .filter((name) => !known.has(name))
    .sort()
    .map((name) => {
      const file = snapshot.sensitiveVariableNames.has(name) ? SENSITIVE_TFVARS_FILE : TFVARS_FILE;
      const near = similar.get(looseName(name));
      const fix = near ? `rename it to "${near}", which the module declares` : 'fix its name, or remove it from the inputs, or declare it in the module (a new image)';
      return {
        code: 'UndeclaredVariable',
        message: `variable "${name}" in ${file} is not declared by the module, so terraform ignores its value: ${fix} (terraform's advice to set TF_VAR_${name} does not apply: the runner passes terraform only its inputs files)`,
      };
    });
}

/** A name with case, `_` and `-` ignored: `nodeCount`, `node-count` and `node_count` are one. */
const looseName = (name: string) => name.toLowerCase().replace(/[-_]/g, '');

/** One notice per input file named like a variables file that the runner does not read as one. */
export function unreadVariablesFiles(files: Iterable<string>): Notice[] {
  const notices: Notice[] = [];
  for (const name of [...files].sort()) {
    const instead = readInstead(name);
    if (instead)
      notices.push({
        code: 'VariablesFileNotRead',
        message: `inputs file "${name}" is not read as variables (the runner passes terraform only ${TFVARS_FILE} and ${SENSITIVE_TFVARS_FILE}; the module sees it only as ${MODULE_INPUTS_DIR}/${name}): put its variables in ${instead}, one JSON object of names to values`,
      });
  }
  return notices;
}

/** The file the runner reads in place of `name`, when `name` looks like a variables file. */
function readInstead(name: string): string | undefined {
  if (/^sensitive\.tfvars(\.ya?ml)?$/.test(name)) return SENSITIVE_TFVARS_FILE;
  if (/^terraform\.tfvars(\.ya?ml)?$/.test(name) || /\.auto\.tfvars(\.json)?$/.test(name)) return TFVARS_FILE;
  return undefined;
}
