// What the runner reserves in every module: the resource that records the inputs hash of the last
// successful apply in the state, the variable that feeds it, and the files the runner adds to its
// copy of the module. A module whose configuration names
// either (or moves, forgets or imports into the resource) is refused before anything runs
// (reservedNamesProblem in workspace.ts); the classifier fails closed on anything at the resource
// that the runner did not plan itself (plan/reserved.ts).

/** The resource that records the inputs hash of the last successful apply in the state. */
export const INPUTS_HASH_RESOURCE_TYPE = 'terraform_data';
export const INPUTS_HASH_RESOURCE_NAME = 'captf_inputs_hash';
export const INPUTS_HASH_RESOURCE = `${INPUTS_HASH_RESOURCE_TYPE}.${INPUTS_HASH_RESOURCE_NAME}`;
/** The variable the runner sets to the inputs hash. */
export const INPUTS_HASH_VARIABLE = 'captf_inputs_hash';

/** Where the module finds input files other than the variable files: `${path.root}/captf-inputs/<name>`. */
export const INPUT_FILES_DIR = 'captf-inputs';
export const INJECTED_FILE = 'captf_runner_inputs_hash.tf';
export const BACKEND_OVERRIDE_FILE = 'captf_runner_backend_override.tf';
/** Written in the JSON syntax (any variable name is written as it is): its name here is the HCL one, for the forms a module may not ship. */
export const SENSITIVE_OVERRIDE_FILE = 'captf_runner_sensitive_override.tf';
/**
 * Every spelling of a runner file a tool loads: OpenTofu skips foo.tf when foo.tofu (or
 * foo.tofu.json) exists, so a module's captf_runner_inputs_hash.tofu would drop the runner's record.
 */
const runnerFileForms = (file: string) =>
  ['', '.json'].flatMap((json) => ['.tf', '.tofu'].map((ext) => `${file.replace(/\.tf$/, ext)}${json}`));
/** What the runner adds to the root of its copy of the module: a module that ships one of these names is refused. */
export const RUNNER_FILES: ReadonlySet<string> = new Set([
  ...runnerFileForms(INJECTED_FILE),
  ...runnerFileForms(BACKEND_OVERRIDE_FILE),
  ...runnerFileForms(SENSITIVE_OVERRIDE_FILE),
  INPUT_FILES_DIR,
]);

/** A place where the module names what the runner reserves. */
export interface ReservedUse {
  /** The file as the scan was given it (scanModule: its path). */
  file: string;
  line: number;
  /** The block, e.g. `moved { to = terraform_data.captf_inputs_hash["a"] }` (whitespace and comments dropped). */
  what: string;
}

/**
 * Whether a `from`/`to` value names the reserved resource of the root module, with or without an
 * index. terraform accepts whitespace and comments between the parts of the traversal and an
 * optional `resource.` prefix; the JSON syntax holds the same traversal in a string.
 */
export const namesReservedResource = (traversal: string) => RESERVED_TRAVERSAL.test(compactTraversal(traversal));
const RESERVED_TRAVERSAL = new RegExp(`^(?:resource\\.)?${INPUTS_HASH_RESOURCE.replace('.', '\\.')}(?![\\w-])`);

/** The traversal without whitespace and comments (strings, such as an index key, kept whole). */
export const compactTraversal = (text: string) =>
  text.replace(
    /("(?:[^"\\]|\\.)*")|#[^\n]*|\/\/[^\n]*|\/\*[\s\S]*?\*\/|\s+/g,
    (_match, string?: string) => string ?? '',
  );
