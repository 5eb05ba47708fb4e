// What the runner needs to know about a module's configuration before terraform reads it: its
// root resources and module calls (the inputs-hash resource depends on all of them), its
// variables, whether it has a backend, and where it names what the runner reserves. A scanner of
// top-level HCL blocks, not a parser: it skips strings, heredocs, comments and nested blocks. If it
// ever misreads, nothing is applied: `terraform validate` fails on a reference it invented, the
// show step compares what terraform says the module declares with what the scan found
// (missedDeclarations), and the classifier fails closed on any change at a reserved address that
// the runner did not plan itself.

import { parseTree, printParseErrorCode, type Node, type ParseError } from 'jsonc-parser';

/** The resource that records the inputs hash of the last successful apply in the state. */
export const INPUTS_HASH_RESOURCE = 'terraform_data.captf_inputs_hash';
export const INPUTS_HASH_VARIABLE = 'captf_inputs_hash';

/** A place where the module names what the runner reserves. */
export interface ReservedUse {
  /** The file as the scan was given it (scanModule: its path). */
  file: string;
  line: number;
  /** The block, e.g. `moved { to = terraform_data.captf_inputs_hash["a"] }` (whitespace and comments dropped). */
  what: string;
}

export interface ModuleScan {
  /** Root managed resources, as `type.name`. */
  resources: string[];
  /** Root module calls, as `module.name`. */
  moduleCalls: string[];
  variables: string[];
  /** Variables declared `sensitive = true`: their values are masked before terraform prints anything. */
  sensitiveVariables: string[];
  backend: string | undefined;
  /** Where the module configures OpenTofu state encryption (`terraform { encryption { … } }`): backups of its state would be in clear. */
  encryption: { file: string; line: number }[];
  /** Every backend or cloud block (`type` is `cloud` for a cloud block), where it is: one in an override file is refused. */
  backendBlocks: { file: string; line: number; type: string }[];
  /** Where the module names the runner's inputs-hash resource or variable: prepareWorkspace and contract check refuse it. */
  reserved: ReservedUse[];
}

export const emptyScan = (): ModuleScan => ({ resources: [], moduleCalls: [], variables: [], sensitiveVariables: [], backend: undefined, backendBlocks: [], encryption: [], reserved: [] });

/** Blocks whose `from`/`to` name a resource address terraform moves, forgets or imports state into. */
const ADDRESS_BLOCKS = new Set(['moved', 'removed', 'import']);
const ADDRESS_ATTRIBUTES = new Set(['from', 'to']);

/**
 * Whether a `from`/`to` value names the reserved resource of the root module, with or without an
 * index. terraform accepts whitespace and comments between the parts of the traversal and an
 * optional `resource.` prefix; the JSON syntax holds the same traversal in a string.
 */
const namesReservedResource = (traversal: string) => RESERVED_TRAVERSAL.test(compactTraversal(traversal));
const RESERVED_TRAVERSAL = new RegExp(`^(?:resource\\.)?${INPUTS_HASH_RESOURCE.replace('.', '\\.')}(?![\\w-])`);

/** The traversal without whitespace and comments (strings, such as an index key, kept whole). */
const compactTraversal = (text: string) => text.replace(/("(?:[^"\\]|\\.)*")|#[^\n]*|\/\/[^\n]*|\/\*[\s\S]*?\*\/|\s+/g, (_match, string?: string) => string ?? '');

function scanAddressAttribute(into: ModuleScan, file: string, line: number, block: string, attribute: string, value: string): void {
  if (ADDRESS_ATTRIBUTES.has(attribute) && namesReservedResource(value)) into.reserved.push({ file, line, what: `${block} { ${attribute} = ${compactTraversal(value)} }` });
}

export function scanHcl(text: string, into: ModuleScan = emptyScan(), file = ''): ModuleScan {
  const scanner = new Scanner(text);
  for (let header = scanner.nextBlock(); header; header = scanner.nextBlock()) {
    const [type, ...labels] = header.words;
    const body = scanner.body();
    if (type === 'resource' && labels.length === 2) {
      const address = `${labels[0]}.${labels[1]}`;
      into.resources.push(address);
      if (address === INPUTS_HASH_RESOURCE) into.reserved.push({ file, line: header.line, what: `resource "${labels[0]}" "${labels[1]}"` });
    } else if (type === 'module' && labels.length === 1) into.moduleCalls.push(`module.${labels[0]}`);
    else if (type === 'variable' && labels.length === 1) {
      into.variables.push(labels[0]!);
      if (labels[0] === INPUTS_HASH_VARIABLE) into.reserved.push({ file, line: header.line, what: `variable "${labels[0]}"` });
      // Read loosely (a nested block saying so counts too): masking too much is the safe mistake.
      if (/^\s*sensitive\s*=\s*true\b/m.test(body.text)) into.sensitiveVariables.push(labels[0]!);
    } else if (type === 'terraform') {
      // The backend sits one level down: terraform { backend "pg" { … } }.
      for (let h = body.nextBlock(); h; h = body.nextBlock()) {
        if (h.words[0] === 'backend' || h.words[0] === 'cloud') {
          const backendType = h.words[0] === 'cloud' ? 'cloud' : (h.words[1] ?? 'unknown');
          if (!into.backend) into.backend = backendType;
          into.backendBlocks.push({ file, line: h.line, type: backendType });
        }
        if (h.words[0] === 'encryption') into.encryption.push({ file, line: h.line });
        body.body();
      }
    } else if (ADDRESS_BLOCKS.has(type!)) {
      for (let item = body.next(); item; item = body.next()) {
        if ('value' in item) scanAddressAttribute(into, file, item.line, type!, item.name, item.value);
        else body.body(); // a nested block (lifecycle, provisioner): its attributes are not the block's
      }
    }
  }
  return into;
}

/** The JSON syntax (.tf.json): the same facts from an object. Every occurrence of a duplicate key counts, as terraform reads each as a block. */
export function scanJson(text: string, into: ModuleScan = emptyScan(), file = ''): ModuleScan {
  const doc = parseJsonWithLines(text);
  if (!('members' in doc)) throw new Error(`the top level is ${'items' in doc ? 'an array' : 'not an object'}, expected a JSON object`);
  for (const [blockType, value] of doc.members) {
    const blocks = objects(value);
    if (blockType === 'resource') {
      for (const [type, named] of blocks.flatMap(members))
        for (const [name, body] of objects(named).flatMap(members)) {
          into.resources.push(`${type}.${name}`);
          if (`${type}.${name}` === INPUTS_HASH_RESOURCE) into.reserved.push({ file, line: body.line, what: `resource "${type}" "${name}"` });
        }
    } else if (blockType === 'module') {
      for (const [name] of blocks.flatMap(members)) into.moduleCalls.push(`module.${name}`);
    } else if (blockType === 'variable') {
      for (const [name, body] of blocks.flatMap(members)) {
        into.variables.push(name);
        if (name === INPUTS_HASH_VARIABLE) into.reserved.push({ file, line: body.line, what: `variable "${name}"` });
        if (objects(body).flatMap(members).some(([key, v]) => key === 'sensitive' && 'scalar' in v && v.scalar === true)) into.sensitiveVariables.push(name);
      }
    } else if (blockType === 'terraform') {
      for (const [key, v] of blocks.flatMap(members)) {
        if (key === 'backend')
          for (const [backend, block] of objects(v).flatMap(members)) {
            into.backend ??= backend;
            into.backendBlocks.push({ file, line: block.line, type: backend });
          }
        if (key === 'cloud') {
          into.backend ??= 'cloud';
          into.backendBlocks.push({ file, line: v.line, type: 'cloud' });
        }
        if (key === 'encryption') into.encryption.push({ file, line: v.line });
      }
    } else if (ADDRESS_BLOCKS.has(blockType)) {
      for (const [attribute, v] of blocks.flatMap(members)) {
        if ('scalar' in v && typeof v.scalar === 'string') scanAddressAttribute(into, file, v.line, blockType, attribute, v.scalar);
      }
    }
  }
  return into;
}

/** A JSON value and the line it starts on. Objects keep every member in order, duplicate keys included. */
type JsonNode = { line: number } & ({ members: [string, JsonNode][] } | { items: JsonNode[] } | { scalar: unknown });

/**
 * The JSON syntax lets a block be an object or an array of them at each level, and terraform also
 * takes an array of arrays for unlabelled blocks (`"moved": [[{…}]]`): every depth is read.
 */
const objects = (node: JsonNode): JsonNode[] => ('items' in node ? node.items.flatMap(objects) : 'members' in node ? [node] : []);
const members = (node: JsonNode): [string, JsonNode][] => ('members' in node ? node.members : []);

/**
 * JSON.parse keeps only the last of duplicate keys (terraform reads every one as a block) and knows
 * no lines: jsonc-parser's syntax tree keeps both. Comments and trailing commas are refused, as terraform does.
 */
function parseJsonWithLines(text: string): JsonNode {
  const lineStarts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lineStarts.push(i + 1);
  const lineAt = (offset: number) => {
    let low = 0;
    let high = lineStarts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (lineStarts[middle]! <= offset) low = middle;
      else high = middle - 1;
    }
    return low + 1;
  };
  const errors: ParseError[] = [];
  const tree = parseTree(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  const first = errors[0];
  if (first || !tree) throw new Error(`invalid JSON on line ${lineAt(first?.offset ?? 0)}: ${first ? printParseErrorCode(first.error) : 'no value'}`);
  const convert = (node: Node): JsonNode => {
    const line = lineAt(node.offset);
    if (node.type === 'object') return { line, members: (node.children ?? []).map((property) => [property.children![0]!.value as string, convert(property.children![1]!)]) };
    if (node.type === 'array') return { line, items: (node.children ?? []).map(convert) };
    return { line, scalar: node.value };
  };
  return convert(tree);
}

const LABEL_ESCAPES: Readonly<Record<string, string>> = { n: '\n', r: '\r', t: '\t', '"': '"', '\\': '\\' };

/** A quoted label as terraform reads it: `variable "captf\u005finputs_hash"` names captf_inputs_hash. */
function unescapeLabel(raw: string): string {
  return raw.replace(/\\(?:u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|(.))/gs, (match, u4?: string, u8?: string, simple?: string) => {
    const hex = u4 ?? u8;
    const codePoint = hex === undefined ? undefined : parseInt(hex, 16);
    if (codePoint !== undefined) return codePoint <= 0x10ffff ? String.fromCodePoint(codePoint) : match;
    return LABEL_ESCAPES[simple!] ?? match;
  });
}

interface Attribute {
  name: string;
  /** The text after `=`, to the end of the value. */
  value: string;
  line: number;
}

interface BlockHeader {
  /** The block type and its labels. */
  words: string[];
  line: number;
}

// HCL's identifiers (Unicode ID_Start/ID_Continue, `_` and `-`) and heredoc introducer.
const IDENTIFIER = /^[\p{ID_Start}_][\p{ID_Continue}-]*/u;
const HEREDOC_START = /^<<-?([\p{ID_Start}_][\p{ID_Continue}-]*)\r?\n/u;
/** What HCL trims around a heredoc's closing marker: Go's unicode.IsSpace. */
const GO_SPACE_AROUND = /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/g;

class Scanner {
  private pos = 0;
  /** Lines are counted up to `counted` (positions are only ever asked for in increasing order). */
  private counted = 0;
  private line: number;

  constructor(
    readonly text: string,
    firstLine = 1,
  ) {
    this.line = firstLine;
  }

  /** The next block header at this level, or undefined at the end. Attributes are skipped. */
  nextBlock(): BlockHeader | undefined {
    for (let item = this.next(); item; item = this.next()) if (!('value' in item)) return item;
    return undefined;
  }

  /** The next attribute or block header at this level (a block's body comes next: read or skip it with body()). */
  next(): Attribute | BlockHeader | undefined {
    for (;;) {
      this.skipSpaceAndComments();
      if (this.pos >= this.text.length) return undefined;
      const start = this.pos;
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
        if (c === '"') words.push(unescapeLabel(this.quoted()));
        else if (c === '{') return { words, line: this.lineAt(start) };
        else if (c === '=') {
          const valueStart = ++this.pos;
          this.skipAttributeValue();
          if (words.length === 1) return { name: ident, value: this.text.slice(valueStart, this.pos), line: this.lineAt(start) };
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

  /** Skips a block body from its `{`; returns a scanner of the text between the braces (lines numbered as in this text). */
  body(): Scanner {
    this.skipSpaceAndComments();
    if (this.text[this.pos] !== '{') return new Scanner('');
    const start = ++this.pos;
    this.skipBalanced('}');
    return new Scanner(this.text.slice(start, this.pos - 1), this.lineAt(start));
  }

  private lineAt(position: number): number {
    for (; this.counted < position; this.counted++) if (this.text.charCodeAt(this.counted) === 0x0a) this.line++;
    return this.line;
  }

  /** To the end of the line, past brackets, strings and heredocs that span lines. */
  private skipAttributeValue(): void {
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
    else if (c === '#' || (c === '/' && this.text[this.pos + 1] === '/')) this.skipLineComment();
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
      else this.skipTemplatePart();
    }
    return this.text.slice(start);
  }

  /** One character of template text, or a whole `${…}` / `%{…}` sequence (which may hold strings, heredocs and newlines). */
  private skipTemplatePart(): void {
    const c = this.text[this.pos];
    // $${ and %%{ are escapes: literal text, not a template.
    if ((c === '$' || c === '%') && this.text[this.pos + 1] === c && this.text[this.pos + 2] === '{') this.pos += 3;
    else if ((c === '$' || c === '%') && this.text[this.pos + 1] === '{') {
      this.pos += 2;
      this.skipBalanced('}');
    } else this.pos++;
  }

  /**
   * A heredoc, as HCL reads it: it ends at a line that holds its marker alone (spaces around it
   * allowed) and that starts outside a template. Templates (`${…}`, `%{…}`) may span lines and hold
   * strings and heredocs of their own, so a marker line inside one does not end it.
   */
  private heredoc(): void {
    const match = HEREDOC_START.exec(this.text.slice(this.pos, this.pos + 256));
    if (!match) {
      this.pos += 2;
      return;
    }
    this.pos += match[0].length;
    while (this.pos < this.text.length) {
      const lineEnd = this.text.indexOf('\n', this.pos);
      const line = this.text.slice(this.pos, lineEnd < 0 ? undefined : lineEnd);
      if (line.replace(GO_SPACE_AROUND, '') === match[1]) {
        this.pos += line.length; // the newline ends the attribute
        return;
      }
      while (this.pos < this.text.length && this.text[this.pos] !== '\n') this.skipTemplatePart();
      this.pos++;
    }
  }

  private identifier(): string | undefined {
    const match = IDENTIFIER.exec(this.text.slice(this.pos, this.pos + 256));
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

  /** Spaces, tabs and block comments, even ones that span lines: HCL reads a block header or an attribute on across them. */
  private skipInlineSpace(): void {
    for (;;) {
      const c = this.text[this.pos];
      if (c === ' ' || c === '\t') this.pos++;
      else if (c === '/' && this.text[this.pos + 1] === '*') this.blockComment();
      else return;
    }
  }

  /** Up to the newline, not past it: the newline ends an attribute value. */
  private skipLineComment(): void {
    const end = this.text.indexOf('\n', this.pos);
    this.pos = end < 0 ? this.text.length : end;
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
