// Inputs that silently do nothing (pure): a variable the module does not declare (terraform only
// warns, and its advice to set TF_VAR_… does not apply to the runner), a file named like a
// variables file the runner does not pass terraform (it reaches the module as captf-inputs/<name>
// only), and a TF_VAR_… in the runner's environment (never passed to terraform: the inputs hash
// would not cover it).
import type { Notice } from '../schemas/result.ts';
import { closestName } from '../util/closest-name.ts';
import { MODULE_INPUTS_DIR, SENSITIVE_TFVARS_FILE, TFVARS_FILE, type InputsSnapshot } from './snapshot.ts';

/** One notice per variable in the inputs that `declared` (the module's root variables) lacks, in name order, with the declared name it is closest to. */
export function undeclaredVariables(
  snapshot: Pick<InputsSnapshot, 'variables' | 'sensitiveVariableNames'>,
  declared: readonly string[],
): Notice[] {
  const known = new Set(declared);
  const similar = new Map(declared.map((name) => [looseName(name), name]));
  return [...snapshot.variables.keys()]
    .filter((name) => !known.has(name))
    .sort()
    .map((name) => {
      const file = snapshot.sensitiveVariableNames.has(name) ? SENSITIVE_TFVARS_FILE : TFVARS_FILE;
      const same = similar.get(looseName(name));
      const near = same ?? closestName(name, declared);
      const fix = same
        ? `rename it to "${same}", which the module declares`
        : near
          ? `did you mean "${near}", which the module declares? Rename it`
          : 'fix its name, or remove it from the inputs, or declare it in the module (a new image)';
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

/** Names terraform or a person gives variables files: `*.tfvars`, `*.tfvars.json`, and YAML forms of them. */
const VARIABLES_FILE = /\.tfvars(?:\.json|\.ya?ml)?$/;

/** The file the runner reads in place of `name`, when `name` looks like a variables file and is not one the runner reads. */
function readInstead(name: string): string | undefined {
  if (name === TFVARS_FILE || name === SENSITIVE_TFVARS_FILE || !VARIABLES_FILE.test(name)) return undefined;
  return name.startsWith('sensitive') ? SENSITIVE_TFVARS_FILE : TFVARS_FILE;
}

/** The prefix of the environment variables terraform reads as variables: the runner removes them before terraform runs. */
const TF_VAR = 'TF_VAR_';

/** One notice per TF_VAR_<name> in the runner's environment, in name order: where its value belongs instead. Its value is never said. */
export function ignoredTfVars(env: NodeJS.ProcessEnv): Notice[] {
  return Object.keys(env)
    .filter((name) => name.startsWith(TF_VAR) && name.length > TF_VAR.length && env[name] !== undefined)
    .sort()
    .map((name) => {
      const variable = name.slice(TF_VAR.length);
      return {
        code: 'TfVarIgnored',
        message: `${name} is set in the runner's environment and is not passed to terraform (variables come only from the inputs, which the inputs hash, and so an approval, covers): put "${variable}" in ${TFVARS_FILE} of the inputs (${SENSITIVE_TFVARS_FILE} for a secret)`,
      };
    });
}
