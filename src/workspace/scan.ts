// What the runner needs to know about a module's configuration before terraform reads it: its
// root resources and module calls (the inputs-hash resource depends on all of them), its
// variables, whether it has a backend, and where it names what the runner reserves. Two scanners
// fill the same record: scan-hcl.ts (top-level HCL blocks, not a parser: it skips strings,
// heredocs, comments and nested blocks) and scan-tf-json.ts (the JSON syntax). If one ever
// misreads, nothing is applied: `terraform validate` fails on a reference it invented, the show
// step compares what terraform says the module declares with what the scan found
// (missedDeclarations), and the classifier fails closed on any change at a reserved address that
// the runner did not plan itself. The calls of nonsensitive() it lists are for people to review:
// one it misses or invents changes nothing the runner does.
import {
  compactTraversal,
  INPUTS_HASH_RESOURCE,
  INPUTS_HASH_VARIABLE,
  namesReservedResource,
  type ReservedUse,
} from './reserved-names.ts';

export interface ModuleScan {
  /** Root managed resources, as `type.name`. */
  resources: string[];
  /** Root module calls, as `module.name`. */
  moduleCalls: string[];
  variables: string[];
  /** Variables declared `sensitive = true`: their values are masked before terraform prints anything. */
  sensitiveVariables: string[];
  /** Variables declared `ephemeral = true` (terraform 1.10+): no saved plan holds their values, so the apply is given them again. */
  ephemeralVariables: string[];
  backend: string | undefined;
  /** Where the module configures OpenTofu state encryption (`terraform { encryption { … } }`): backups of its state would be in clear. */
  encryption: { file: string; line: number }[];
  /** Every backend or cloud block (`type` is `cloud` for a cloud block), where it is: one in an override file is refused. */
  backendBlocks: BackendBlock[];
  /** Where the module names the runner's inputs-hash resource or variable: prepareWorkspace and contract check refuse it. */
  reserved: ReservedUse[];
  /** Configuration files the tool in use does not read (nothing above counts them), and what they would have declared. */
  skipped: SkippedFile[];
  /**
   * Each call of nonsensitive(), in the module's files and those of its subdirectories (its child modules):
   * it declassifies a sensitive value, and what terraform then prints is the module's act (contract check and every op name each).
   */
  nonsensitive: SourcePlace[];
}

/** A place in a file of the module: the file as the scan was given it, its line from 1. */
export interface SourcePlace {
  file: string;
  line: number;
}

/** A configuration file the tool skips: its path, the file it reads instead (its twin), why, and what the file holds. */
export interface SkippedFile {
  file: string;
  twin?: string;
  why: string;
  backendBlocks: BackendBlock[];
  /** It declares resources, module calls or variables. */
  declares: boolean;
}

export interface BackendBlock {
  file: string;
  line: number;
  type: string;
  /** A local backend's `path`, when the block sets it to a plain string (contract check: where the state would be). */
  path?: string;
}

export const emptyScan = (): ModuleScan => ({
  resources: [],
  moduleCalls: [],
  variables: [],
  sensitiveVariables: [],
  ephemeralVariables: [],
  backend: undefined,
  backendBlocks: [],
  encryption: [],
  reserved: [],
  skipped: [],
  nonsensitive: [],
});

/** A root `resource "type" "name"` block, at `line` of `file`. */
export function addResource(into: ModuleScan, file: string, line: number, type: string, name: string): void {
  const address = `${type}.${name}`;
  into.resources.push(address);
  if (address === INPUTS_HASH_RESOURCE) into.reserved.push({ file, line, what: `resource "${type}" "${name}"` });
}

/** A root `variable "name"` block, at `line` of `file`, and whether it says `sensitive = true` and `ephemeral = true`. */
export function addVariable(
  into: ModuleScan,
  file: string,
  line: number,
  name: string,
  says: { sensitive: boolean; ephemeral: boolean },
): void {
  into.variables.push(name);
  if (name === INPUTS_HASH_VARIABLE) into.reserved.push({ file, line, what: `variable "${name}"` });
  if (says.sensitive) into.sensitiveVariables.push(name);
  if (says.ephemeral) into.ephemeralVariables.push(name);
}

/** Blocks whose `from`/`to` name a resource address terraform moves, forgets or imports state into. */
export const ADDRESS_BLOCKS: ReadonlySet<string> = new Set(['moved', 'removed', 'import']);
const ADDRESS_ATTRIBUTES = new Set(['from', 'to']);

/** An attribute of a moved, removed or import block: `from`/`to` at the reserved resource is a reserved use. */
export function addAddressAttribute(
  into: ModuleScan,
  file: string,
  line: number,
  block: string,
  attribute: string,
  value: string,
): void {
  if (ADDRESS_ATTRIBUTES.has(attribute) && namesReservedResource(value))
    into.reserved.push({ file, line, what: `${block} { ${attribute} = ${compactTraversal(value)} }` });
}
