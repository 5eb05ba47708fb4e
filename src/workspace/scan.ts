// What the runner needs to know about a module's configuration before terraform reads it: its
// root resources and module calls (the inputs-hash resource depends on all of them), its
// variables and whether it has a backend. A scanner of top-level HCL blocks, not a parser: it
// skips strings, heredocs, comments and nested blocks. If it ever misreads, nothing is applied:
// `terraform validate` fails on a reference it invented, and the show step compares what terraform
// says the module declares with what the scan found (missedDeclarations).

export interface ModuleScan {
  /** Root managed resources, as `type.name`. */
  resources: string[];
  /** Root module calls, as `module.name`. */
  moduleCalls: string[];
  variables: string[];
  /** Variables declared `sensitive = true`: their values are masked before terraform prints anything. */
  sensitiveVariables: string[];
  backend: string | undefined;
}

export const emptyScan = (): ModuleScan => ({ resources: [], moduleCalls: [], variables: [], sensitiveVariables: [], backend: undefined });

export function scanHcl(text: string, into: ModuleScan = emptyScan()): ModuleScan {
  const scanner = new Scanner(text);
  for (;;) {
    const header = scanner.blockHeader();
    if (!header) break;
    const [type, ...labels] = header;
    if (type === 'resource' && labels.length === 2) into.resources.push(`${labels[0]}.${labels[1]}`);
    else if (type === 'module' && labels.length === 1) into.moduleCalls.push(`module.${labels[0]}`);
    else if (type === 'variable' && labels.length === 1) {
      into.variables.push(labels[0]!);
      // Read loosely (a nested block saying so counts too): masking too much is the safe mistake.
      if (/^\s*sensitive\s*=\s*true\b/m.test(scanner.blockBody())) into.sensitiveVariables.push(labels[0]!);
      continue;
    }
    if (type === 'terraform') {
      // The backend sits one level down: terraform { backend "pg" { … } }.
      const inner = scanner.blockBody();
      const innerScanner = new Scanner(inner);
      for (let h = innerScanner.blockHeader(); h; h = innerScanner.blockHeader()) {
        if ((h[0] === 'backend' || h[0] === 'cloud') && !into.backend) into.backend = h[0] === 'cloud' ? 'cloud' : (h[1] ?? 'unknown');
        innerScanner.blockBody();
      }
    } else {
      scanner.blockBody();
    }
  }
  return into;
}

/** The JSON syntax (.tf.json): the same facts from an object. */
export function scanJson(text: string, into: ModuleScan = emptyScan()): ModuleScan {
  const doc = JSON.parse(text) as Record<string, unknown>;
  const objects = (v: unknown): Record<string, unknown>[] => (Array.isArray(v) ? v : v && typeof v === 'object' ? [v as Record<string, unknown>] : []);
  for (const block of objects(doc.resource)) for (const [type, named] of Object.entries(block)) for (const n of objects(named)) for (const name of Object.keys(n)) into.resources.push(`${type}.${name}`);
  for (const block of objects(doc.module)) for (const name of Object.keys(block)) into.moduleCalls.push(`module.${name}`);
  for (const block of objects(doc.variable))
    for (const [name, body] of Object.entries(block)) {
      into.variables.push(name);
      if (objects(body).some((b) => b.sensitive === true)) into.sensitiveVariables.push(name);
    }
  for (const t of objects(doc.terraform)) {
    for (const b of objects(t.backend)) into.backend ??= Object.keys(b)[0];
    if (t.cloud) into.backend ??= 'cloud';
  }
  return into;
}

class Scanner {
  private pos = 0;
  constructor(private readonly text: string) {}

  /** The identifier and labels of the next block at this level, or undefined at the end. Attributes are skipped. */
  blockHeader(): string[] | undefined {
    for (;;) {
      this.skipSpaceAndComments();
      if (this.pos >= this.text.length) return undefined;
      const words: string[] = [];
      const ident = this.identifier();
      if (!ident) {
        this.skipToLineEnd();
        continue;
      }
      words.push(ident);
      for (;;) {
        this.skipInlineSpace();
        const c = this.text[this.pos];
        if (c === '"') words.push(this.quoted());
        else if (c === '{') return words;
        else if (c === '=') {
          this.skipAttributeValue();
          break;
        } else {
          const label = this.identifier();
          if (label) words.push(label);
          else {
            this.skipToLineEnd();
            break;
          }
        }
      }
    }
  }

  /** Skips a block body from its `{` and returns the text between the braces. */
  blockBody(): string {
    this.skipSpaceAndComments();
    if (this.text[this.pos] !== '{') return '';
    const start = ++this.pos;
    this.skipBalanced('}');
    return this.text.slice(start, this.pos - 1);
  }

  private skipAttributeValue(): void {
    this.pos++; // '='
    while (this.pos < this.text.length && this.text[this.pos] !== '\n') this.skipConstruct();
  }

  /** Advances past the closer that balances an opener already consumed. */
  private skipBalanced(closer: string): void {
    while (this.pos < this.text.length) {
      if (this.text[this.pos] === closer) {
        this.pos++;
        return;
      }
      this.skipConstruct();
    }
  }

  /** Skips what starts here: a nested bracket, a string, a heredoc, a comment, or one character. */
  private skipConstruct(): void {
    const c = this.text[this.pos];
    if (c === '{') (this.pos++, this.skipBalanced('}'));
    else if (c === '[') (this.pos++, this.skipBalanced(']'));
    else if (c === '(') (this.pos++, this.skipBalanced(')'));
    else if (c === '"') this.quoted();
    else if (c === '<' && this.text.startsWith('<<', this.pos)) this.heredoc();
    else if (c === '#' || (c === '/' && this.text[this.pos + 1] === '/')) this.skipToLineEnd();
    else if (c === '/' && this.text[this.pos + 1] === '*') this.blockComment();
    else this.pos++;
  }

  /** A quoted string, template interpolations (which may hold strings and braces) included. */
  private quoted(): string {
    const start = ++this.pos;
    while (this.pos < this.text.length) {
      const c = this.text[this.pos];
      if (c === '\\') this.pos += 2;
      else if (c === '"') return this.text.slice(start, this.pos++);
      // $${ and %%{ are escapes: literal text, not a template.
      else if ((c === '$' || c === '%') && this.text[this.pos + 1] === c && this.text[this.pos + 2] === '{') this.pos += 3;
      else if ((c === '$' || c === '%') && this.text[this.pos + 1] === '{') {
        this.pos += 2;
        this.skipBalanced('}');
      } else this.pos++;
    }
    return this.text.slice(start);
  }

  private heredoc(): void {
    const match = /^<<-?([A-Za-z_][A-Za-z0-9_-]*)\r?\n/.exec(this.text.slice(this.pos, this.pos + 256));
    if (!match) {
      this.pos += 2;
      return;
    }
    this.pos += match[0].length;
    const end = new RegExp(`^[ \\t]*${match[1]}[ \\t]*$`, 'm');
    const rest = end.exec(this.text.slice(this.pos));
    this.pos = rest ? this.pos + rest.index + rest[0].length : this.text.length;
  }

  private identifier(): string | undefined {
    const match = /^[A-Za-z_][A-Za-z0-9_-]*/.exec(this.text.slice(this.pos, this.pos + 256));
    if (!match) return undefined;
    this.pos += match[0].length;
    return match[0];
  }

  private skipSpaceAndComments(): void {
    for (;;) {
      const c = this.text[this.pos];
      if (c === undefined) return;
      if (/\s/.test(c)) this.pos++;
      else if (c === '#' || (c === '/' && this.text[this.pos + 1] === '/')) this.skipToLineEnd();
      else if (c === '/' && this.text[this.pos + 1] === '*') this.blockComment();
      else return;
    }
  }

  private skipInlineSpace(): void {
    while (this.text[this.pos] === ' ' || this.text[this.pos] === '\t') this.pos++;
  }

  private skipToLineEnd(): void {
    const end = this.text.indexOf('\n', this.pos);
    this.pos = end < 0 ? this.text.length : end + 1;
  }

  private blockComment(): void {
    const end = this.text.indexOf('*/', this.pos + 2);
    this.pos = end < 0 ? this.text.length : end + 2;
  }
}
