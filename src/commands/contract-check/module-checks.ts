// The checks of the module's files (reserved, files, tfvars, backend, variables): each refuses what every op
// refuses before terraform runs (prepareWorkspace), so a module that passes them is one the ops take.
import { readdir, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { ObjectKind } from '../../object-kind.ts';
import { RunnerError } from '../../errors.ts';
import { DECLASSIFIED_IS_PRINTED, DECLASSIFIES } from '../../workspace/declassified.ts';
import { INPUTS_HASH_RESOURCE, INPUTS_HASH_VARIABLE } from '../../workspace/reserved-names.ts';
import type { ModuleScan } from '../../workspace/scan.ts';
import { scanHcl } from '../../workspace/scan-hcl.ts';
import type { ModuleEntry } from '../../workspace/module-tree.ts';
import type { PathResolution } from '../../workspace/path-resolution.ts';
import {
  BACKEND_FILE,
  BACKEND_FILE_TOFU,
  moduleFilesProblem,
  overrideBackendBlocks,
  overrideBackendProblem,
  readModule,
  reservedNamesProblem,
  RUNNER_FILES,
  shadowedBackendProblem,
  shippedVariablesFiles,
  shippedVariablesProblem,
  skippedFilesProblem,
} from '../../workspace/workspace.ts';
import { localBackendBlockProblem, STATE_OUTSIDE_WORKDIR_FIX } from '../../workspace/state-location.ts';
import { REQUIRED_VARIABLES } from './module-files.ts';
import type { CheckName, CheckRow } from './report.ts';

export const skipped = (name: CheckName): CheckRow => [name, 'skip', 'not checked: no module'];

/** The backend in backend.tf and nowhere else: restore and unlock build a root of that file alone. */
export async function backendCheck(
  moduleDir: string,
  scan: ModuleScan,
  resolution: PathResolution,
  inModule: (file: string) => string,
): Promise<CheckRow> {
  const fix = `put the module's backend alone in ${BACKEND_FILE}: terraform { backend "kubernetes" {} } (its settings come from --backend-config files)`;
  if (!scan.backend)
    return ['backend', 'fail', 'the module declares no backend: its state would be lost with the workdir', fix];
  // Every op refuses this too (prepareWorkspace): an override file's backend wins over backend.tf.
  const override = overrideBackendProblem(scan);
  if (override)
    return [
      'backend',
      'fail',
      override.message,
      override.fix,
      overrideBackendBlocks(scan).map((b) => ({
        file: inModule(b.file),
        line: b.line,
        message: b.type === 'cloud' ? 'cloud block in an override file' : `backend "${b.type}" in an override file`,
      })),
    ];
  const shadowed = await shadowedBackendProblem(moduleDir);
  if (shadowed)
    return [
      'backend',
      'fail',
      shadowed.message,
      shadowed.fix,
      [
        {
          file: BACKEND_FILE_TOFU,
          message: `beside ${BACKEND_FILE}: OpenTofu reads it, terraform reads ${BACKEND_FILE}`,
        },
      ],
    ];
  const text = await resolution
    .resolve(join(moduleDir, BACKEND_FILE))
    .then((real) => readFile(real, 'utf8'))
    .catch(() => undefined);
  const elsewhere = scan.backendBlocks
    .filter((b) => basename(b.file) !== BACKEND_FILE)
    .map((b) => ({ file: inModule(b.file), line: b.line, message: `backend "${b.type}" outside ${BACKEND_FILE}` }));
  if (text === undefined)
    return [
      'backend',
      'fail',
      `the module declares backend "${scan.backend}", but not in ${BACKEND_FILE}`,
      fix,
      elsewhere,
    ];
  const own = scanHcl(text);
  if (!own.backend)
    return [
      'backend',
      'fail',
      `${BACKEND_FILE} holds no backend block (the module declares backend "${scan.backend}" elsewhere)`,
      fix,
      elsewhere,
    ];
  if (own.resources.length + own.moduleCalls.length + own.variables.length > 0)
    return [
      'backend',
      'fail',
      `${BACKEND_FILE} holds more than the backend block (resources, module calls or variables)`,
      fix,
      [{ file: BACKEND_FILE, message: 'holds resources, module calls or variables besides the backend block' }],
    ];
  // Every op refuses it too, after init (StateInWorkdir): the state would be lost with the workdir.
  const block = own.backendBlocks[0]!;
  const inWorkdir = localBackendBlockProblem(block);
  if (inWorkdir)
    return [
      'backend',
      'fail',
      `${BACKEND_FILE}: ${inWorkdir}`,
      STATE_OUTSIDE_WORKDIR_FIX,
      [{ file: BACKEND_FILE, line: block.line, message: inWorkdir }],
    ];
  return [
    'backend',
    'pass',
    `backend "${own.backend}" in ${BACKEND_FILE}${block.path ? ` (the state at ${block.path}, which must be on a volume that outlives the pod)` : ''}`,
  ];
}

/** Every op refuses such a module before terraform runs (prepareWorkspace). */
export function reservedCheck(scan: ModuleScan | RunnerError, inModule: (file: string) => string): CheckRow {
  if (scan instanceof RunnerError) return skipped('reserved');
  const problem = reservedNamesProblem(scan);
  if (problem)
    return [
      'reserved',
      'fail',
      problem.message,
      problem.fix,
      scan.reserved.map((use) => ({ file: inModule(use.file), line: use.line, message: use.what })),
    ];
  return ['reserved', 'pass', `names neither ${INPUTS_HASH_RESOURCE} nor var.${INPUTS_HASH_VARIABLE}`];
}

/**
 * Each call of nonsensitive() in the module's files and its subdirectories', by file and line: a
 * warning, never a failure (declassifying is the module's right), so that review sees it. Every op
 * names them too (the notice NonsensitiveCalls).
 */
export function nonsensitiveCheck(scan: ModuleScan, inModule: (file: string) => string): CheckRow {
  const calls = scan.nonsensitive;
  if (calls.length === 0) return ['nonsensitive', 'pass', 'no call of nonsensitive(): the module declassifies nothing'];
  return [
    'nonsensitive',
    'pass',
    `${calls.length} call${calls.length === 1 ? '' : 's'} of nonsensitive(), each named in a warning: ${calls.length === 1 ? 'it' : 'each'} ${DECLASSIFIES}: ${DECLASSIFIED_IS_PRINTED}`,
    undefined,
    undefined,
    calls.map((call) => `${inModule(call.file)}:${call.line}: nonsensitive() ${DECLASSIFIES}`),
  ];
}

/**
 * The module's files as the workdir copy takes them: apply, plan, refresh and drift refuse what this
 * fails on (prepareWorkspace). `entries`: what the copy holds, when it can be made.
 */
export async function filesCheck(
  moduleDir: string,
  scan: ModuleScan | RunnerError,
  resolution: PathResolution,
  inModule: (file: string) => string,
): Promise<{ row: CheckRow; entries?: ModuleEntry[] }> {
  if (scan instanceof RunnerError) return { row: skipped('files') };
  const tree = await readModule(moduleDir, resolution).catch((error: Error) => error);
  if (tree instanceof Error)
    return {
      row: [
        'files',
        'fail',
        `the module dir cannot be read: ${tree.message}`,
        "make the module readable by the runner's uid",
      ],
    };
  const problem = moduleFilesProblem(tree.problems);
  if (problem)
    return {
      row: [
        'files',
        'fail',
        problem.message,
        problem.fix,
        tree.problems.map((p) => ({ file: inModule(p.file), message: p.what })),
      ],
    };
  // Every op refuses these too (prepareWorkspace): files the tool does not read that would change the run.
  const skippedFiles = skippedFilesProblem(scan);
  if (skippedFiles)
    return {
      row: [
        'files',
        'fail',
        skippedFiles.message,
        skippedFiles.fix,
        skippedFiles.files.map((file) => ({ file: inModule(file.file), message: file.why })),
      ],
    };
  return {
    row: [
      'files',
      'pass',
      `no file named like the runner's own (${[...RUNNER_FILES].join(', ')}); no symbolic link leads outside the module`,
    ],
    entries: tree.entries,
  };
}

export async function tfvarsCheck(moduleDir: string, scan: ModuleScan | RunnerError): Promise<CheckRow> {
  if (scan instanceof RunnerError) return skipped('tfvars');
  const names = shippedVariablesFiles(
    (await readdir(moduleDir, { withFileTypes: true }).catch(() => []))
      .filter((entry) => !entry.isDirectory())
      .map((entry) => entry.name),
  );
  if (names.length === 0)
    return [
      'tfvars',
      'pass',
      'no terraform.tfvars(.json) or *.auto.tfvars(.json): every variable value comes from the inputs',
    ];
  const problem = shippedVariablesProblem(names);
  return [
    'tfvars',
    'fail',
    problem.message,
    problem.fix,
    names.map((file) => ({ file, message: 'terraform loads this file by itself, outside the inputs hash' })),
  ];
}

export function variablesCheck(scan: ModuleScan, kind: ObjectKind | undefined): CheckRow {
  if (!kind) return ['variables', 'pass', 'no --kind given: no per-kind variables required'];
  const required = REQUIRED_VARIABLES[kind];
  const missing = required.filter((name) => !scan.variables.includes(name));
  if (missing.length === 0)
    return [
      'variables',
      'pass',
      required.length ? `declares ${required.join(', ')} (required for ${kind})` : `nothing required for ${kind}`,
    ];
  return [
    'variables',
    'fail',
    `a ${kind} module must declare ${missing.map((n) => `variable "${n}"`).join(' and ')}`,
    `add ${missing.map((n) => `variable "${n}" {}`).join(' and ')} to the module (the controller always sets ${missing.length === 1 ? 'it' : 'them'})`,
  ];
}
