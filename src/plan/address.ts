// The parts of a resource instance address, as terraform writes them in a plan
// (`module.db["eu"].aws_db_instance.main[0]`): the module path, the mode, the type and the name.
// terraform gives them beside `address` for where an entry is, but only the whole string for where
// it was before a move (`previous_address`): the policy views read that one's parts here. Pure.

export interface AddressParts {
  /** `module.db["eu"]`; "" at the root. */
  module: string;
  mode: 'managed' | 'data';
  type: string;
  name: string;
}

/** One step of an address: a name and the instance key written after it (`["eu"]`, `[0]`), if any. */
interface Step {
  name: string;
  text: string;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_-]*/;

/** The parts of `address`, or undefined when it is not a resource instance address. */
export function addressParts(address: string): AddressParts | undefined {
  const steps = readSteps(address);
  if (!steps) return undefined;
  const modules: string[] = [];
  let i = 0;
  while (steps[i]?.text === 'module' && steps.length - i > 3) {
    modules.push(`module.${steps[i + 1]!.text}`);
    i += 2;
  }
  const data = steps[i]?.text === 'data' && steps.length - i === 3;
  const rest = steps.slice(data ? i + 1 : i);
  // A type has no key, and `module` is no type (`module.a` is a module call).
  if (rest.length !== 2 || rest[0]!.text !== rest[0]!.name || rest[0]!.name === 'module') return undefined;
  return { module: modules.join('.'), mode: data ? 'data' : 'managed', type: rest[0]!.name, name: rest[1]!.name };
}

/** The steps between the dots, each with its key; a quoted key may hold dots, brackets and escaped quotes. */
function readSteps(address: string): Step[] | undefined {
  const steps: Step[] = [];
  let at = 0;
  while (at < address.length) {
    const name = IDENTIFIER.exec(address.slice(at))?.[0];
    if (!name) return undefined;
    let end = at + name.length;
    if (address[end] === '[') {
      const close = keyEnd(address, end);
      if (close === undefined) return undefined;
      end = close + 1;
    }
    steps.push({ name, text: address.slice(at, end) });
    if (end === address.length) return steps;
    if (address[end] !== '.') return undefined;
    at = end + 1;
  }
  return undefined;
}

/** The index of the `]` that closes the key opened at `open`. */
function keyEnd(address: string, open: number): number | undefined {
  let at = open + 1;
  if (address[at] === '"') {
    for (at++; at < address.length; at++) {
      if (address[at] === '\\') at++;
      else if (address[at] === '"') break;
    }
    at++;
  } else {
    while (at < address.length && /[0-9]/.test(address[at]!)) at++;
  }
  return address[at] === ']' && at > open + 1 ? at : undefined;
}
