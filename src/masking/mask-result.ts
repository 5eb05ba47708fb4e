// A result masked for a sink. Masking by value cannot tell a secret from a word of the protocol: a
// secret "succeeded" would mask the outcome, a secret "delete" a destructive entry's action, and break
// the result's own schema. The runner's own fields are constants it chose, never text from the
// inputs, so they are given back as they were: those its schema limits to the words it lists (its
// enums and literals), and the few free strings that still hold only its words (reason, step names).
import { Result } from '../schemas/result.ts';
import { maskValue, type Masker } from './mask.ts';
import { denialMessage } from './boundary.ts';

export const PROTOCOL_WORD_WARNING =
  "a secret equals a word of the runner protocol (an op, outcome, reason, step, status, action, object kind or another word its schema lists): the result, the termination message and the log lines keep those fields as they are (they hold the runner's own words); it is masked everywhere else, the summaries included";

type Path = (string | number)[];

/** The parts of a zod schema the walk reads (zod's own definitions: `schema._zod.def`). */
interface Walked {
  _zod: {
    def: {
      type: string;
      shape?: Record<string, Walked>;
      element?: Walked;
      innerType?: Walked;
      options?: Walked[];
      valueType?: Walked;
      in?: Walked;
    };
  };
  safeParse(value: unknown): { success: boolean };
}

const isNode = (value: unknown): value is Node => value !== null && typeof value === 'object';

/** The paths of the strings in `value` where `schema` allows only the words it lists (an enum, a literal). */
function listedWordPaths(schema: Walked, value: unknown, path: Path, found: Path[]): Path[] {
  const def = schema._zod.def;
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
    case 'readonly':
      return listedWordPaths(def.innerType!, value, path, found);
    case 'pipe':
      return listedWordPaths(def.in!, value, path, found);
    case 'enum':
    case 'literal':
      if (typeof value === 'string') found.push(path);
      return found;
    case 'union': {
      const option = def.options!.find((candidate) => candidate.safeParse(value).success);
      return option ? listedWordPaths(option, value, path, found) : found;
    }
    case 'object':
      if (isNode(value))
        for (const [key, field] of Object.entries(def.shape!))
          if (key in value) listedWordPaths(field, value[key], [...path, key], found);
      return found;
    case 'array':
      if (Array.isArray(value))
        value.forEach((item, index) => listedWordPaths(def.element!, item, [...path, index], found));
      return found;
    case 'record':
      if (isNode(value))
        for (const [key, item] of Object.entries(value)) listedWordPaths(def.valueType!, item, [...path, key], found);
      return found;
    default:
      return found;
  }
}

/** The paths of the fields that hold only the runner's own words. */
function protocolPaths(result: Result): Path[] {
  return [
    ...listedWordPaths(Result as unknown as Walked, result, [], []),
    ['reason'],
    ['error', 'reason'],
    ['error', 'step'],
    ['annotations', 'captf.io/outcome'],
    ['annotations', 'captf.io/reason'],
    ...result.steps.map((_, index) => ['steps', index, 'name']),
  ];
}

type Node = Record<string | number, unknown>;

const valueAt = (node: unknown, path: Path) =>
  path.reduce<Node | undefined>((at, step) => at?.[step] as Node | undefined, node as Node);

/** Whether a secret equals (or is inside) a word in one of the runner's own fields (at `paths`): masking would change it. */
function holdsSecretWord(masker: Masker, result: Result, paths: readonly Path[]): boolean {
  return paths.some((path) => {
    const value = valueAt(result, path);
    return typeof value === 'string' && maskValue(masker, value) !== value;
  });
}

/** `unmasked` as it is, with the warning of PROTOCOL_WORD_WARNING when a secret equals a word of its own fields. */
export function warnedOfSecretWords(masker: Masker, unmasked: Result, paths = protocolPaths(unmasked)): Result {
  return holdsSecretWord(masker, unmasked, paths)
    ? { ...unmasked, warnings: [...unmasked.warnings, PROTOCOL_WORD_WARNING] }
    : unmasked;
}

/**
 * `unmasked` masked field by field, its protocol fields as they were, with a warning when masking had
 * changed one; each policy denial's message masked whole, then cut (denialMessage, boundary.ts: the
 * evaluator keeps it whole).
 */
export function maskResult(masker: Masker, unmasked: Result): Result {
  // Found once: walking the result against its schema tries each union's options with a parse.
  const paths = protocolPaths(unmasked);
  const denied = unmasked.plan?.policy?.denied;
  const masked = maskValue(
    masker,
    warnedOfSecretWords(
      masker,
      withDenialMessages(unmasked, () => ''),
      paths,
    ),
  );
  for (const path of paths) {
    const key = path.at(-1)!;
    const from = valueAt(unmasked, path.slice(0, -1));
    const to = valueAt(masked, path.slice(0, -1));
    if (from && to && from[key] !== undefined) to[key] = from[key];
  }
  return denied ? withDenialMessages(masked, (index) => denialMessage(masker, denied[index]!.message)) : masked;
}

/** `result` with each policy denial's message replaced (masked once, at the boundary, not with the rest). */
function withDenialMessages(result: Result, message: (index: number) => string): Result {
  const policy = result.plan?.policy;
  if (!policy) return result;
  const denied = policy.denied.map((denial, index) => ({ ...denial, message: message(index) }));
  return { ...result, plan: { ...result.plan!, policy: { ...policy, denied } } };
}
