// The HCL syntax of a module: a scanner of top-level blocks (resource, module, variable, terraform
// and the moved, removed and import blocks), not a parser: it skips strings, heredocs, comments and
// nested blocks, as HCL reads them, to find where each block starts and ends. And the calls of
// nonsensitive() anywhere in an expression (nonsensitiveCallLines), which the JSON syntax's templates share.
import { ADDRESS_BLOCKS, addAddressAttribute, addResource, addVariable, emptyScan, type ModuleScan } from './scan.ts';

export function scanHcl(text: string, into: ModuleScan = emptyScan(), file = ''): ModuleScan {
  for (const line of nonsensitiveCallLines(text, 'hcl')) into.nonsensitive.push({ file, line });
  const scanner = new Scanner(text);
  for (let header = scanner.nextBlock(); header; header = scanner.nextBlock()) {
    const [type, ...labels] = header.words;
    const body = scanner.body();
    if (type === 'resource' && labels.length === 2) addResource(into, file, header.line, labels[0]!, labels[1]!);
    else if (type === 'module' && labels.length === 1) into.moduleCalls.push(`module.${labels[0]}`);
    else if (type === 'variable' && labels.length === 1) {
      // Read loosely (a nested block saying so counts too): masking too much, or giving the apply a
      // variables file it does not need, is the safe mistake.
      const says = (argument: string) => new RegExp(`^\\s*${argument}\\s*=\\s*true\\b`, 'm').test(body.text);
      addVariable(into, file, header.line, labels[0]!, { sensitive: says('sensitive'), ephemeral: says('ephemeral') });
    } else if (type === 'terraform') {
      // The backend sits one level down: terraform { backend "pg" { … } }.
      for (let h = body.nextBlock(); h; h = body.nextBlock()) {
        const block = body.body();
        if (h.words[0] === 'backend' || h.words[0] === 'cloud') {
          const backendType = h.words[0] === 'cloud' ? 'cloud' : (h.words[1] ?? 'unknown');
          if (!into.backend) into.backend = backendType;
          const path = backendType === 'local' ? stringAttribute(block, 'path') : undefined;
          into.backendBlocks.push({ file, line: h.line, type: backendType, ...(path !== undefined && { path }) });
        }
        if (h.words[0] === 'encryption') into.encryption.push({ file, line: h.line });
      }
    } else if (ADDRESS_BLOCKS.has(type!)) {
      for (let item = body.next(); item; item = body.next()) {
        if ('value' in item) addAddressAttribute(into, file, item.line, type!, item.name, item.value);
        else body.body(); // a nested block (lifecycle, provisioner): its attributes are not the block's
      }
    }
  }
  return into;
}

/** A plain quoted string (no template), with or without a comment after it. */
const PLAIN_STRING = /^\s*"((?:[^"\\$%]|\\.|\$(?!\{)|%(?!\{))*)"\s*(?:(?:#|\/\/).*)?$/s;

/** The value of a block's attribute when it is a plain string (backend settings must be literals); undefined otherwise. */
function stringAttribute(block: Scanner, name: string): string | undefined {
  for (let item = block.next(); item; item = block.next()) {
    if (!('value' in item)) block.body();
    else if (item.name === name) {
      const match = PLAIN_STRING.exec(item.value);
      return match ? unescapeLabel(match[1]!) : undefined;
    }
  }
  return undefined;
}

const LABEL_ESCAPES: Readonly<Record<string, string>> = { n: '\n', r: '\r', t: '\t', '"': '"', '\\': '\\' };

/** A quoted label as terraform reads it: `variable "captf\u005finputs_hash"` names captf_inputs_hash. */
function unescapeLabel(raw: string): string {
  return raw.replace(
    /\\(?:u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|(.))/gs,
    (match, u4?: string, u8?: string, simple?: string) => {
      const hex = u4 ?? u8;
      const codePoint = hex === undefined ? undefined : parseInt(hex, 16);
      if (codePoint !== undefined) return codePoint <= 0x10ffff ? String.fromCodePoint(codePoint) : match;
      return LABEL_ESCAPES[simple!] ?? match;
    },
  );
}

/** Where an expression of the text goes on: HCL code (at `closer`, a template's `}` ends it), a quoted string, a heredoc's or a JSON string's template. */
type Frame =
  | { kind: 'code'; depth: number; closer: boolean }
  | { kind: 'string' }
  | { kind: 'heredoc'; marker: string }
  | { kind: 'template' };

/**
 * The lines where `text` calls terraform's nonsensitive() (as `nonsensitive(` or `core::nonsensitive(`):
 * in expressions, those inside the templates of strings and heredocs (`"${nonsensitive(var.x)}"`)
 * included, never in a comment or in a template's literal text (`"nonsensitive(x)"`, `$${…}`).
 * `hcl`: a configuration file; `template`: a string the JSON syntax reads as a template, all of it text
 * but its `${…}` and `%{…}` (no escapes of its own: JSON decoded them). One line per call, counted from 1.
 */
export function nonsensitiveCallLines(text: string, syntax: 'hcl' | 'template'): number[] {
  const lines: number[] = [];
  if (!text.includes('nonsensitive')) return lines; // most modules: no need to read their syntax
  const stack: Frame[] = [syntax === 'hcl' ? { kind: 'code', depth: 0, closer: false } : { kind: 'template' }];
  let line = 1;
  /** In a heredoc, at the start of a line that starts outside a template: the line may be its marker. */
  let heredocLineStart = false;
  let pos = 0;
  while (pos < text.length) {
    const frame = stack[stack.length - 1]!;
    const c = text[pos]!;
    if (frame.kind === 'heredoc' && heredocLineStart) {
      heredocLineStart = false;
      const lineEnd = text.indexOf('\n', pos);
      if (text.slice(pos, lineEnd < 0 ? undefined : lineEnd).replace(GO_SPACE_AROUND, '') === frame.marker) {
        stack.pop();
        pos = lineEnd < 0 ? text.length : lineEnd;
        continue;
      }
    }
    if (c === '\n') {
      line++;
      pos++;
      if (frame.kind === 'heredoc') heredocLineStart = true;
      continue;
    }
    if (frame.kind !== 'code') {
      // Template text: only `${` and `%{` open code; `$${` and `%%{` are literal text.
      if (frame.kind === 'string' && c === '\\') pos += text[pos + 1] === '\n' ? 1 : 2;
      else if (frame.kind === 'string' && c === '"') stack.pop(), pos++;
      else if ((c === '$' || c === '%') && text[pos + 1] === c && text[pos + 2] === '{') pos += 3;
      else if ((c === '$' || c === '%') && text[pos + 1] === '{') {
        stack.push({ kind: 'code', depth: 0, closer: true });
        pos += 2;
      } else pos++;
      continue;
    }
    if (c === '#' || (c === '/' && text[pos + 1] === '/')) {
      const end = text.indexOf('\n', pos);
      pos = end < 0 ? text.length : end;
    } else if (c === '/' && text[pos + 1] === '*') {
      const end = text.indexOf('*/', pos + 2);
      const stop = end < 0 ? text.length : end + 2;
      for (let i = text.indexOf('\n', pos); i !== -1 && i < stop; i = text.indexOf('\n', i + 1)) line++;
      pos = stop;
    } else if (c === '"') {
      stack.push({ kind: 'string' });
      pos++;
    } else if (c === '<' && text[pos + 1] === '<') {
      const heredoc = HEREDOC_START.exec(text.slice(pos, pos + 256));
      if (heredoc) {
        stack.push({ kind: 'heredoc', marker: heredoc[1]! });
        pos += heredoc[0].length;
        line++;
        heredocLineStart = true;
      } else pos += 2;
    } else if (c === '{') {
      frame.depth++;
      pos++;
    } else if (c === '}') {
      if (frame.depth === 0 && frame.closer) stack.pop();
      else frame.depth = Math.max(0, frame.depth - 1);
      pos++;
    } else {
      IDENTIFIER_AT.lastIndex = pos;
      const identifier = IDENTIFIER_AT.exec(text)?.[0];
      if (!identifier) {
        pos++;
        continue;
      }
      if (identifier === 'nonsensitive' && CALL_OPENS.test(text.slice(pos + identifier.length, pos + 256))) {
        // `core::nonsensitive` is terraform's too; another namespace's (`provider::p::nonsensitive`) or an attribute (`x.nonsensitive`) is not.
        const before = text.slice(Math.max(0, pos - 8), pos);
        if (!/(?:\.|::)\s*$/.test(before) || /(?:^|[^\p{ID_Continue}:-])core::$/u.test(before)) lines.push(line);
      }
      pos += identifier.length;
    }
  }
  return lines;
}

/** An identifier where `lastIndex` says (sticky: no copy of the text). */
const IDENTIFIER_AT = /[\p{ID_Start}_][\p{ID_Continue}-]*/uy;
/** What may stand between a function's name and its arguments. */
const CALL_OPENS = /^[ \t]*\(/;

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
const GO_SPACE_AROUND =
  /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/g;

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
          if (words.length === 1)
            return { name: ident, value: this.text.slice(valueStart, this.pos), line: this.lineAt(start) };
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
    if (c === '{') this.pos++, this.skipBalanced('}');
    else if (c === '[') this.pos++, this.skipBalanced(']');
    else if (c === '(') this.pos++, this.skipBalanced(')');
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
