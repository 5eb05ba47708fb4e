// The diagnostics of terraform 1.11.4 that fail the same way on every retry, and what each means
// for the exit code: the module or image must change (ImageInvalid, exit 4) or the inputs must
// (InputsInvalid, exit 2). Besides the list, every configuration error init or validate reports
// (an error at a line of the module's files) is the module's. Only a command whose every error is
// one of these is read so; any other error keeps the command's own reason and exit 1 (a retry may pass). Each entry is tested on what
// terraform really printed (test/terraform/known-diagnostics.test.ts, test/fixtures/terraform-output).
// Also how a diagnostic is reported: where it points, relative to the module root, never the
// quoted source or values; bounded. Pure.
import { basename, isAbsolute, relative } from 'node:path';
import { maskThenCut } from '../masking/boundary.ts';
import { DIAGNOSTIC_TEXT_BYTES, DIAGNOSTICS_LIMIT, type TerraformDiagnostic } from '../schemas/result.ts';
import type { PrintedDiagnostic } from './diagnostics.ts';
import { escapeRegExp } from '../masking/secret-forms.ts';
import { CONFIG_FILE } from '../workspace/terraform-files.ts';
import { RUNNER_FILES } from '../workspace/reserved-names.ts';

type Recurring = 'image' | 'inputs';

interface KnownDiagnostic {
  summary: string;
  /** When the summary alone does not say it: what the detail must also say. */
  detail?: RegExp;
  /** When the references terraform noted the values of (their names) decide it: whether they do. */
  references?: (names: readonly string[]) => boolean;
  /** terraform's advice that does not apply to the runner (its `fix` says what does): left out of the message. */
  advice?: RegExp;
  means: Recurring;
  /** What to do: a sentence of the message. */
  fix: string;
}

const FIX_CONFIGURATION = 'Fix the module (terraform validate shows the same): every retry fails the same way';
const FIX_VALUE = 'in terraform.tfvars.json or sensitive.tfvars.json of the inputs: every retry fails the same way';
/** file() and its kin of a path the module does not hold (terraform 1.11's detail). */
const NO_SUCH_FILE = /no file exists at/;
const isVariable = (name: string) => name.startsWith('var.');

export const KNOWN_DIAGNOSTICS: readonly KnownDiagnostic[] = [
  // HCL's syntax errors: init reports them without its preamble in a called module's files.
  { summary: 'Unclosed configuration block', means: 'image', fix: FIX_CONFIGURATION },
  { summary: 'Invalid expression', means: 'image', fix: FIX_CONFIGURATION },
  { summary: 'Argument or block definition required', means: 'image', fix: FIX_CONFIGURATION },
  { summary: 'Invalid multi-line string', means: 'image', fix: FIX_CONFIGURATION },
  { summary: 'Unterminated template string', means: 'image', fix: FIX_CONFIGURATION },
  { summary: 'Reference to undeclared resource', means: 'image', fix: FIX_CONFIGURATION },
  { summary: 'Reference to undeclared input variable', means: 'image', fix: FIX_CONFIGURATION },
  { summary: 'Unsupported argument', means: 'image', fix: FIX_CONFIGURATION },
  {
    summary: 'Unsupported backend type',
    means: 'image',
    fix: 'Fix the backend block of the module: terraform has no backend of that type',
  },
  {
    summary: 'Unreadable module directory',
    means: 'image',
    fix: "Fix the module call's source: a local module must be a directory inside the module",
  },
  // The image's CLI configuration names its filesystem mirror only (no registry): what is not there never comes.
  // Not so when a registry is configured and unreachable ("could not connect to registry"): the network may come back.
  {
    summary: 'Failed to query available provider packages',
    detail: /was not found in any of the search locations/,
    means: 'image',
    fix: 'The image must carry the provider in its mirror (contract/sections/image.md), or the module must not require it: no registry is configured, so every retry fails the same way',
  },
  {
    summary: 'Provider dependency changes detected',
    means: 'image',
    fix: 'Ship a .terraform.lock.hcl that records every provider the module requires (init runs with -lockfile=readonly)',
  },
  // Every variable of sensitive.tfvars.json is sensitive to terraform (the runner's override): a module that shows one, or derives instance keys from one, must change.
  {
    summary: 'Output refers to sensitive values',
    means: 'image',
    fix: 'Mark the output sensitive = true (its value then goes only to the result Secret), or stop showing a secret in it: every variable of sensitive.tfvars.json is sensitive to terraform, so every retry fails the same way',
  },
  {
    summary: 'Invalid for_each argument',
    detail: /Sensitive values, or values derived from sensitive values, cannot be used as for_each arguments/,
    means: 'image',
    fix: 'Keep for_each keys out of sensitive.tfvars.json (its variables are sensitive to terraform; a map whose keys are not secret belongs in terraform.tfvars.json), or take the keys with nonsensitive(keys(...)) in the module: every retry fails the same way',
  },
  // A precondition that reads nothing but variables fails the same way for the same inputs (one that
  // reads a local, a resource or a data source may not: it keeps PlanFailed, exit 1).
  {
    summary: 'Resource precondition failed',
    references: (names) => names.length > 0 && names.every(isVariable),
    means: 'inputs',
    fix: `Give the variables the condition reads values it accepts ${FIX_VALUE}`,
  },
  // file() reads only the module's own files: a path the inputs choose names one it does not ship, or the module lacks it.
  {
    summary: 'Invalid function argument',
    detail: NO_SUCH_FILE,
    references: (names) => names.some(isVariable),
    means: 'inputs',
    fix: 'The inputs name a file the module does not ship: give the variables of the path values that name one it ships in terraform.tfvars.json or sensitive.tfvars.json of the inputs, or ship the file in the module (a new image): every retry fails the same way',
  },
  {
    summary: 'Invalid function argument',
    detail: NO_SUCH_FILE,
    means: 'image',
    fix: "Ship the file in the module (file() reads only the module's own files, never one a resource creates: take that from the resource's attribute): every retry fails the same way",
  },
  // The runner takes no -var or -var-file: the inputs files are its only variables.
  {
    summary: 'No value for required variable',
    means: 'inputs',
    fix: `Give the variable a value (or the module a default) ${FIX_VALUE}`,
    advice: / ?Use a -var or -var-file command line argument to provide a value for this variable\./,
  },
  {
    summary: 'Invalid value for input variable',
    means: 'inputs',
    fix: `Give the variable a value of the type the module declares ${FIX_VALUE}`,
  },
  {
    summary: 'Invalid value for variable',
    means: 'inputs',
    fix: `Give the variable a value its validation accepts ${FIX_VALUE}`,
  },
];

/** init's preamble before the configuration's own errors: it says there are some, and decides nothing itself. */
const INIT_PREAMBLE =
  'Terraform encountered problems during initialisation, including problems with the configuration, described below.';

/**
 * What terraform reports as an error of the module's configuration, whatever its summary: an error
 * that points at a line of one of the module's configuration files (never one of the runner's own),
 * said by `validate` (it reads nothing but the configuration) or by an `init` that printed its
 * preamble (the configuration did not load). Every retry fails the same way.
 */
const CONFIGURATION_ERROR: Omit<KnownDiagnostic, 'summary'> = { means: 'image', fix: FIX_CONFIGURATION };

export interface RecurringFailure {
  means: Recurring;
  /** The first error, on the list, that decided it. */
  first: PrintedDiagnostic;
  fix: string;
  /** terraform's advice in it that does not apply to the runner. */
  advice?: RegExp;
}

/** The errors among `diagnostics`, but init's preamble. */
export const errorsOf = <D extends Pick<PrintedDiagnostic, 'severity' | 'summary'>>(diagnostics: readonly D[]): D[] =>
  diagnostics.filter((d) => d.severity === 'error' && d.summary !== INIT_PREAMBLE);

const knownEntry = (d: PrintedDiagnostic) =>
  KNOWN_DIAGNOSTICS.find(
    (k) =>
      k.summary === d.summary &&
      (!k.detail || k.detail.test(d.detail.replace(/\s+/g, ' '))) &&
      (!k.references || k.references(d.references ?? [])),
  );

/** The commands whose failures may fail the same way on every retry: the others' are never read so. */
export type ReadCommand = 'init' | 'validate' | 'plan';

/** Whether the command's located errors are configuration errors: validate's always, init's after its preamble. */
const reportsConfiguration = (command: ReadCommand, diagnostics: readonly PrintedDiagnostic[]) =>
  command === 'validate' ||
  (command === 'init' && diagnostics.some((d) => d.severity === 'error' && d.summary === INIT_PREAMBLE));

/** A line of one of the module's configuration files: relative to the module root (terraform's cwd), never a runner's file. */
function inModuleConfiguration(d: PrintedDiagnostic, root: string | undefined): boolean {
  if (d.file === undefined || d.line === undefined || !CONFIG_FILE.test(d.file)) return false;
  const file = isAbsolute(d.file) ? (root === undefined ? undefined : relative(root, d.file)) : d.file;
  return file !== undefined && file !== '' && !file.startsWith('..') && !isAbsolute(file) && !RUNNER_FILES.has(file);
}

/**
 * When every error of a failed init, validate or plan is on the list, or is a configuration error
 * (CONFIGURATION_ERROR): what it means (the module or image, else the inputs). undefined when any
 * error is neither, or there is none. `complete`: all of stderr was read (a tail may have lost an
 * error that is not on the list). Any other command's failure is never read so: what a module
 * prints while it applies is not terraform speaking. `root`: the module root, where terraform ran.
 */
export function recurringFailure(
  command: ReadCommand,
  diagnostics: readonly PrintedDiagnostic[],
  complete: boolean,
  root?: string,
): RecurringFailure | undefined {
  if (!complete) return undefined;
  const errors = errorsOf(diagnostics);
  const configuration = reportsConfiguration(command, diagnostics);
  const known = errors.map(
    (d) => knownEntry(d) ?? (configuration && inModuleConfiguration(d, root) ? CONFIGURATION_ERROR : undefined),
  );
  if (!known.length || known.some((k) => k === undefined)) return undefined;
  const at = Math.max(
    0,
    known.findIndex((k) => k!.means === 'image'),
  );
  return {
    means: known[at]!.means,
    first: errors[at]!,
    fix: known[at]!.fix,
    ...(known[at]!.advice ? { advice: known[at]!.advice } : {}),
  };
}

/** Where a command ran, to report its diagnostics: paths of the runner's workdir never reach the result. */
export interface DiagnosticPlace {
  /** terraform's working directory: the module root of the runner's copy. */
  root: string;
  /** The -var-file paths: the runner's canonical copies of the inputs files, named like them. */
  varFiles: readonly string[];
  /** The run's masker: a text is masked before it is cut (a secret cut in two would no longer match). */
  mask?: (text: string) => string;
}

/** The diagnostics as the result reports them (error.detail.diagnostics): located, masked, bounded. */
export function reportedDiagnostics(
  diagnostics: readonly PrintedDiagnostic[],
  place: DiagnosticPlace,
): { diagnostics: TerraformDiagnostic[]; diagnosticsTotal?: number } {
  const reported = diagnostics.slice(0, DIAGNOSTICS_LIMIT).map((d) => reportedDiagnostic(d, place));
  return {
    diagnostics: reported,
    ...(diagnostics.length > DIAGNOSTICS_LIMIT ? { diagnosticsTotal: diagnostics.length } : {}),
  };
}

export function reportedDiagnostic(d: PrintedDiagnostic, place: DiagnosticPlace): TerraformDiagnostic {
  const text = (s: string) =>
    maskThenCut({ mask: place.mask ?? ((t: string) => t) }, withoutWorkdirPaths(s, place), {
      bytes: DIAGNOSTIC_TEXT_BYTES,
    });
  const varFile = d.file === undefined ? undefined : place.varFiles.find((f) => f === d.file);
  const aboutVarFile = varFile !== undefined || place.varFiles.some((f) => d.detail.includes(f));
  const variable = aboutVarFile
    ? ((varFile ? d.sourceKey : undefined) ?? /\bvar\.([A-Za-z_][A-Za-z0-9_-]*)/.exec(d.detail)?.[1])
    : undefined;
  const file = varFile ? basename(varFile) : d.file === undefined ? undefined : moduleRelative(d.file, place.root);
  return {
    severity: d.severity,
    summary: text(d.summary),
    ...(d.detail ? { detail: text(d.detail) } : {}),
    ...(file !== undefined ? { file } : {}),
    // The line of the canonical copy is not a line of the person's file.
    ...(file !== undefined && !varFile && d.line !== undefined ? { line: d.line } : {}),
    ...(variable !== undefined ? { variable } : {}),
  };
}

/** `main.tf:4`, `terraform.tfvars.json (variable replicas)`, or '' where terraform points nowhere. */
export function diagnosticPlace(d: TerraformDiagnostic): string {
  if (d.file === undefined) return '';
  return `${d.file}${d.line === undefined ? '' : `:${d.line}`}${d.variable === undefined ? '' : ` (variable ${d.variable})`}`;
}

/** A path terraform names, relative to the module root; undefined when it is outside it (a path of the runner's, never the person's). */
function moduleRelative(file: string, root: string): string | undefined {
  if (!isAbsolute(file)) return file;
  const inside = relative(root, file);
  return inside && !inside.startsWith('..') && !isAbsolute(inside) ? inside : undefined;
}

/** A variables file's copy (with terraform's position in it, `:2,10-28`) by the person's file name; the module root's path taken off. */
function withoutWorkdirPaths(text: string, place: DiagnosticPlace): string {
  let out = text;
  for (const file of place.varFiles)
    out = out.replace(new RegExp(`${escapeRegExp(file)}(?::\\d+,\\d+(?:-\\d+)?)?`, 'g'), basename(file));
  return out.split(`${place.root}/`).join('');
}
