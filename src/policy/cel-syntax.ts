// Where a CEL expression stops parsing, said as cel-go says it: the line and column, and the
// expression's line with a caret under the place (pure). The parser reports the furthest place it
// tried, which for an unclosed bracket or string is far from the mistake: brackets, strings and a
// trailing operator are checked first, by a scan that knows CEL's strings and comments.

interface Place {
  /** From 1. */
  line: number;
  /** From 1, in characters. */
  column: number;
}

const CLOSING: Record<string, string> = { '(': ')', '[': ']', '{': '}' };
const OPENING: Record<string, string> = { ')': '(', ']': '[', '}': '{' };

/** A binary operator or separator an expression cannot end with. */
const TRAILING_OPERATOR = /(==|!=|<=|>=|&&|\|\||[-+*/%<>!?:.,]|\bin)\s*$/;

/** The problem text of a parse error of `source`: `line L, column C: what`, then the line and a caret under the place. */
export function celSyntaxProblem(source: string, parserMessage: string): string {
  const found = structuralProblem(source) ?? trailingOperator(source) ?? parserProblem(parserMessage);
  if (!found) return parserMessage;
  return `line ${found.at.line}, column ${found.at.column}: ${found.what}\n${caretLines(source, found.at)}`;
}

/** The expression's line at `at`, and a line pointing at its column (cel-go's form). */
function caretLines(source: string, at: Place): string {
  const line = (source.split('\n')[at.line - 1] ?? '').trimEnd();
  return ` | ${line}\n | ${'.'.repeat(Math.max(0, at.column - 1))}^`;
}

/** Brackets that do not match, and strings that do not end. */
function structuralProblem(source: string): { at: Place; what: string } | undefined {
  const open: { char: string; at: Place }[] = [];
  const chars = [...source];
  let line = 1;
  let column = 0;
  const place = (): Place => ({ line, column });
  for (let i = 0; i < chars.length; i++) {
    const char = chars[i]!;
    column++;
    if (char === '\n') {
      line++;
      column = 0;
      continue;
    }
    if (char === '/' && chars[i + 1] === '/') {
      while (i + 1 < chars.length && chars[i + 1] !== '\n') i++;
      continue;
    }
    if (char === '"' || char === "'") {
      const start = place();
      const raw = /[rR]/.test(chars[i - 1] ?? '') && !/[\w]/.test(chars[i - 2] ?? '');
      const triple = chars[i + 1] === char && chars[i + 2] === char;
      const quote = triple ? char.repeat(3) : char;
      let j = i + quote.length;
      let ended = false;
      let lines = 0;
      let lastLineStart = -1;
      for (; j < chars.length; j++) {
        if (!raw && chars[j] === '\\') {
          j++;
          continue;
        }
        if (chars[j] === '\n') {
          if (!triple) break;
          lines++;
          lastLineStart = j;
        }
        if (chars.slice(j, j + quote.length).join('') === quote) {
          ended = true;
          break;
        }
      }
      if (!ended) return { at: start, what: 'the string that starts here does not end (a quote is missing)' };
      const end = j + quote.length - 1;
      if (lines) {
        line += lines;
        column = end - lastLineStart;
      } else column += end - i;
      i = end;
      continue;
    }
    if (CLOSING[char]) open.push({ char, at: place() });
    else if (OPENING[char]) {
      const last = open.pop();
      if (!last) return { at: place(), what: `"${char}" closes nothing` };
      if (last.char !== OPENING[char])
        return {
          at: place(),
          what: `"${char}" cannot close the "${last.char}" at ${placeText(last.at, line)}: a "${CLOSING[last.char]}" is missing before it`,
        };
    }
  }
  const unclosed = open.pop();
  if (unclosed)
    return {
      at: endOf(source),
      what: `missing "${CLOSING[unclosed.char]}" to close the "${unclosed.char}" at ${placeText(unclosed.at, line)}`,
    };
  return undefined;
}

function trailingOperator(source: string): { at: Place; what: string } | undefined {
  const trailing = TRAILING_OPERATOR.exec(source.replace(/\/\/[^\n]*$/, ''));
  return trailing
    ? { at: endOf(source), what: `the expression ends after "${trailing[1]}": something must follow it` }
    : undefined;
}

/** The place the parser names (`<input>:L:C: …`), with what it says. */
function parserProblem(message: string): { at: Place; what: string } | undefined {
  const said = /^<input>:(\d+):(\d+): (.*)$/s.exec(message);
  return said ? { at: { line: Number(said[1]), column: Number(said[2]) }, what: said[3]! } : undefined;
}

/** Just after the last character of the expression (trailing whitespace ignored). */
function endOf(source: string): Place {
  const lines = source.trimEnd().split('\n');
  return { line: lines.length, column: [...lines[lines.length - 1]!].length + 1 };
}

const placeText = (at: Place, line: number) =>
  at.line === line ? `column ${at.column}` : `line ${at.line}, column ${at.column}`;
