// The dependency lock file (.terraform.lock.hcl) as terraform writes it: one `provider "ADDRESS"`
// block per provider with its version and the hashes it vouches for. Read strictly (pure): what
// does not look like terraform's own output is an error, never a guess, because what it vouches for
// decides which provider packages an image may carry.

export interface LockedProvider {
  /** Lower case, as terraform normalizes it: `registry.terraform.io/hashicorp/null`. */
  address: string;
  version: string;
  /** `h1:…` (a package's files) and `zh:…` (a release zip's sha256, from the registry's signed SHA256SUMS). */
  hashes: string[];
}

export class LockFileSyntaxError extends Error {
  constructor(line: number, what: string) {
    super(`line ${line}: ${what}`);
    this.name = 'LockFileSyntaxError';
  }
}

type Token = { kind: 'word' | 'string' | 'punct'; text: string; line: number };

function tokens(text: string): Token[] {
  const found: Token[] = [];
  let line = 1;
  for (let at = 0; at < text.length; ) {
    const rest = text.slice(at);
    const space = /^[ \t\r]+|^\n/.exec(rest);
    const comment = /^(?:#|\/\/)[^\n]*|^\/\*[\s\S]*?\*\//.exec(rest);
    const skip = space ?? comment;
    if (skip) {
      line += skip[0].split('\n').length - 1;
      at += skip[0].length;
      continue;
    }
    const string = /^"([^"\\\n]*)"/.exec(rest);
    const word = /^[A-Za-z_][A-Za-z0-9_-]*/.exec(rest);
    if (string) found.push({ kind: 'string', text: string[1]!, line });
    else if (word) found.push({ kind: 'word', text: word[0], line });
    else if ('{}[]=,'.includes(rest[0]!)) found.push({ kind: 'punct', text: rest[0]!, line });
    else
      throw new LockFileSyntaxError(
        line,
        `unexpected ${JSON.stringify(rest[0])} (terraform writes provider blocks of plain strings only)`,
      );
    at += string?.[0].length ?? word?.[0].length ?? 1;
  }
  return found;
}

export function parseLockFile(text: string): LockedProvider[] {
  const list = tokens(text);
  let at = 0;
  const lastLine = () => list[list.length - 1]?.line ?? 1;
  const take = (kind: Token['kind'], text?: string): Token => {
    const token = list[at];
    if (!token || token.kind !== kind || (text !== undefined && token.text !== text))
      throw new LockFileSyntaxError(
        token?.line ?? lastLine(),
        `expected ${text ? `"${text}"` : `a ${kind}`}, found ${token ? JSON.stringify(token.text) : 'the end of the file'}`,
      );
    at++;
    return token;
  };
  const providers: LockedProvider[] = [];
  while (at < list.length) {
    const block = take('word', 'provider');
    const address = take('string').text.toLowerCase();
    if (providers.some((p) => p.address === address))
      throw new LockFileSyntaxError(block.line, `a second provider block for ${address}`);
    take('punct', '{');
    const attributes = new Map<string, string | string[]>();
    while (list[at]?.text !== '}') {
      const name = take('word');
      take('punct', '=');
      if (attributes.has(name.text))
        throw new LockFileSyntaxError(name.line, `a second ${name.text} in the block of ${address}`);
      if (list[at]?.text !== '[') {
        attributes.set(name.text, take('string').text);
        continue;
      }
      take('punct', '[');
      const values: string[] = [];
      while (list[at]?.text !== ']') {
        values.push(take('string').text);
        if (list[at]?.text !== ']') take('punct', ',');
      }
      take('punct', ']');
      attributes.set(name.text, values);
    }
    take('punct', '}');
    const version = attributes.get('version');
    const hashes = attributes.get('hashes') ?? [];
    if (typeof version !== 'string')
      throw new LockFileSyntaxError(block.line, `the block of ${address} has no version`);
    if (!Array.isArray(hashes)) throw new LockFileSyntaxError(block.line, `the hashes of ${address} are not a list`);
    providers.push({ address, version, hashes });
  }
  return providers;
}
