// The inputs as the runner uses them, built (purely) from the logical files of the inputs dir:
// what a Secret or ConfigMap volume shows as its keys. readInputs (read.ts) supplies the files.
import { posix } from 'node:path';
import { RunnerError, usageError } from '../errors.ts';
import { canonicalVarFile, JsonNumber, type JsonObject, type JsonValue } from './canonical.ts';
import { JsonSyntaxError } from '../util/json-syntax-error.ts';
import { NegativeZeroError, parseExactJson, type JsonPathSegment } from './json.ts';
import { MIN_MASKED_LENGTH } from '../masking/mask.ts';

/** The module variables. */
export const TFVARS_FILE = 'terraform.tfvars.json';
/** Module variables whose values are secret: masked in every output from the first byte. */
export const SENSITIVE_TFVARS_FILE = 'sensitive.tfvars.json';
/** Where the module finds every other input: `${path.root}/captf-inputs/<name>`. */
export const MODULE_INPUTS_DIR = 'captf-inputs';

export const INPUTS_INVALID = 'InputsInvalid';

/** The key grammar of Secrets and ConfigMaps, so every name is plain ASCII wherever it comes from. */
const INPUT_NAME = /^[-._a-zA-Z0-9]{1,253}$/;

export interface InputsSnapshot {
  /** The original bytes of terraform.tfvars.json, absent if none. Terraform reads terraformVarFiles() instead. */
  readonly tfvarsJson: Uint8Array | undefined;
  /** The original bytes of sensitive.tfvars.json; absent if none. */
  readonly sensitiveTfvarsJson: Uint8Array | undefined;
  /** Both files merged, numbers canonical: the variables the hash covers. */
  readonly variables: JsonObject;
  /** The variables that came from sensitive.tfvars.json. */
  readonly sensitiveVariableNames: ReadonlySet<string>;
  /** Every other input by name, for `${path.root}/captf-inputs/<name>`; reserved names left out. */
  readonly files: ReadonlyMap<string, Uint8Array>;
}

/** The controller's own records in the durable inputs Secret: neither inputs nor hashed. */
export function isReservedName(name: string): boolean {
  return name.startsWith('captf.') || name.startsWith('captf-');
}

/**
 * Builds the snapshot from logical files (name -> bytes). Reserved names are ignored. `location`
 * (the inputs dir) only makes messages name real paths. Throws a usage error (InputsInvalid) for
 * an invalid name, a malformed tfvars file, or a variable set in both tfvars files.
 */
export function inputsFromFiles(logicalFiles: ReadonlyMap<string, Uint8Array>, location?: string): InputsSnapshot {
  const files = new Map<string, Uint8Array>();
  for (const [name, bytes] of logicalFiles) {
    if (isReservedName(name)) continue;
    if (!INPUT_NAME.test(name) || name.startsWith('..')) {
      throw usageError(
        INPUTS_INVALID,
        `input ${JSON.stringify(name)} in ${location ?? 'the inputs'} is not a valid Secret or ConfigMap key: ` +
          'rename it to at most 253 letters, digits, "-", "_" and "." (not starting with "..")',
        { file: name },
      );
    }
    files.set(name, bytes);
  }
  const tfvarsJson = files.get(TFVARS_FILE);
  const sensitiveTfvarsJson = files.get(SENSITIVE_TFVARS_FILE);
  files.delete(TFVARS_FILE);
  files.delete(SENSITIVE_TFVARS_FILE);

  const displayPath = (name: string) => (location === undefined ? name : posix.join(location, name));
  const parse = (bytes: Uint8Array | undefined, name: string): JsonObject =>
    bytes === undefined ? new Map() : parseTfvars(bytes, displayPath(name), name === SENSITIVE_TFVARS_FILE);
  const plainVariables = parse(tfvarsJson, TFVARS_FILE);
  const sensitiveVariables = parse(sensitiveTfvarsJson, SENSITIVE_TFVARS_FILE);

  const variables = new Map(plainVariables);
  for (const [name, value] of sensitiveVariables) {
    if (variables.has(name)) {
      throw usageError(
        INPUTS_INVALID,
        `variable "${name}" is set in both ${displayPath(TFVARS_FILE)} and ${displayPath(SENSITIVE_TFVARS_FILE)}: ` +
          `keep it in ${SENSITIVE_TFVARS_FILE} only if it is secret, else in ${TFVARS_FILE} only`,
        { file: SENSITIVE_TFVARS_FILE, variable: name },
      );
    }
    variables.set(name, value);
  }
  return {
    tfvarsJson,
    sensitiveTfvarsJson,
    variables,
    sensitiveVariableNames: new Set(sensitiveVariables.keys()),
    files,
  };
}

function parseTfvars(bytes: Uint8Array, path: string, sensitive: boolean): JsonObject {
  const fix = 'fix it so the file is one JSON object of variable names to values';
  let value: JsonValue;
  try {
    value = parseExactJson(bytes);
  } catch (error) {
    if (error instanceof NegativeZeroError) throw negativeZeroError(error, path, sensitive);
    if (!(error instanceof JsonSyntaxError)) throw error;
    throw usageError(INPUTS_INVALID, `${path} is not valid JSON: ${error.message}; ${fix}`, {
      file: posix.basename(path),
      line: error.line,
      column: error.column,
    });
  }
  if (!(value instanceof Map)) {
    throw usageError(INPUTS_INVALID, `${path} holds ${describeKind(value)} at the top, not an object; ${fix}`, {
      file: posix.basename(path),
    });
  }
  return value as JsonObject;
}

/**
 * terraform reads `-0` as a negative zero and renders it so (`"cp-${var.gen}"` is `cp--0`), and a
 * saved plan loses the sign (the apply then fails half way with "inconsistent final plan"). In
 * sensitive.tfvars.json only the variable is named: keys inside it may be secret.
 */
function negativeZeroError(error: NegativeZeroError, path: string, sensitive: boolean): RunnerError {
  const shown = sensitive ? error.path.slice(0, 1) : error.path;
  const nested = shown.length < error.path.length;
  const where = nested ? `a number inside ${jsonPath(shown)}` : jsonPath(shown);
  const literal = sensitive ? '' : ` (${error.literal})`;
  const note = nested ? ' (keys inside a sensitive variable are not named)' : '';
  return usageError(
    INPUTS_INVALID,
    `${path}: ${where} is a negative zero${literal} at line ${error.line} column ${error.column}${note}: ` +
      'terraform keeps its sign, so it would render differently from 0; write 0',
    { file: posix.basename(path), line: error.line, column: error.column, path: jsonPath(shown) },
  );
}

/** `$.nodes[2].gen`; keys that are not identifiers in brackets: `$["a b"]`. */
function jsonPath(path: readonly JsonPathSegment[]): string {
  return (
    '$' +
    path
      .map((segment) =>
        typeof segment === 'number'
          ? `[${segment}]`
          : /^[A-Za-z_][A-Za-z0-9_-]*$/.test(segment)
            ? `.${segment}`
            : `[${JSON.stringify(segment)}]`,
      )
      .join('')
  );
}

/**
 * The variables files terraform reads (-var-file, in this order): each file's object in canonical
 * JSON, one variable per line (terraform's messages then point at one variable). Not the original
 * bytes: terraform parses some spellings of one number differently (see contract/sections/inputs.md),
 * so only text that is a function of the hashed variables makes one hash mean one set of values.
 */
export function terraformVarFiles(snapshot: InputsSnapshot): { name: string; content: string }[] {
  const fileVariables = (sensitive: boolean) =>
    new Map([...snapshot.variables].filter(([name]) => snapshot.sensitiveVariableNames.has(name) === sensitive));
  const varFiles: { name: string; content: string }[] = [];
  if (snapshot.tfvarsJson) varFiles.push({ name: TFVARS_FILE, content: canonicalVarFile(fileVariables(false)) });
  if (snapshot.sensitiveTfvarsJson)
    varFiles.push({ name: SENSITIVE_TFVARS_FILE, content: canonicalVarFile(fileVariables(true)) });
  return varFiles;
}

/**
 * The variables file of just `names` (those the inputs set), canonical like terraformVarFiles, or
 * undefined when the inputs set none of them: for the apply of a saved plan, which holds no value
 * of an ephemeral variable (terraform 1.10+ must be given them again).
 */
export function varFileOf(snapshot: Pick<InputsSnapshot, 'variables'>, names: readonly string[]): string | undefined {
  const chosen = new Map([...snapshot.variables].filter(([name]) => names.includes(name)));
  return chosen.size === 0 ? undefined : canonicalVarFile(chosen);
}

function describeKind(value: JsonValue): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (value instanceof JsonNumber) return 'a number';
  return `a ${typeof value}`;
}

/**
 * The texts to mask: every non-empty string value inside a sensitive variable, and every object key
 * of at least MIN_MASKED_LENGTH characters (terraform prints a map's keys in clear: a user name is
 * no less secret than its password), longest first (so a masker replaces a secret before a shorter
 * one it contains), each with the variable it is in (the first by name, when several hold it): a
 * warning names the variable, never the value. Numbers, booleans and shorter keys are not masked:
 * their texts ("true", "1", "id") are everywhere in logs, so masking them would hide the logs and
 * protect nothing.
 */
export function secretValues(
  snapshot: Pick<InputsSnapshot, 'variables' | 'sensitiveVariableNames'>,
): { value: string; variable: string }[] {
  const found = new Map<string, string>();
  let variable = '';
  const add = (text: string) => {
    if (!found.has(text)) found.set(text, variable);
  };
  const collect = (value: JsonValue): void => {
    if (typeof value === 'string') {
      if (value !== '') add(value);
    } else if (Array.isArray(value)) {
      value.forEach(collect);
    } else if (value instanceof Map) {
      for (const [key, member] of value) {
        if (key.length >= MIN_MASKED_LENGTH) add(key);
        collect(member);
      }
    }
  };
  for (const name of [...snapshot.sensitiveVariableNames].sort()) {
    const value = snapshot.variables.get(name);
    variable = name;
    if (value !== undefined) collect(value);
  }
  return [...found]
    .sort(([a], [b]) => b.length - a.length || (a < b ? -1 : a > b ? 1 : 0))
    .map(([value, name]) => ({ value, variable: name }));
}
