// CEL's `matches`, metered (policy.md §5): each pattern compiled once and kept (a few, bounded by
// their instructions), its compiled program bounded before it is built, run by RE2's NFA only, and a
// call charged by the program's size, not the pattern's length: RE2's work and memory grow with the
// instructions (`.{1000}` is six characters and about 1,000 instructions), and the library compiled
// the pattern again at every call. Pure but for the cache, which changes no charge: a call costs the
// same whether its pattern was compiled before or not.
import { RE2JS } from '@bufbuild/re2';

/** The most instructions a pattern may compile to (RE2's own limit is 3.3 million: 828 MB were measured for one). */
export const MAX_REGEX_INSTRUCTIONS = 5_000;
/** The instructions of the patterns kept compiled, all together: when over, the oldest are dropped. */
const CACHE_INSTRUCTIONS = 20_000;

/** A compiled pattern, or why it is refused: `size` when its program would be over the bound (its syntax otherwise). */
export type CompiledPattern = { matcher: RE2JS; instructions: number } | { refused: string; size: boolean };

const cache = new Map<string, CompiledPattern>();
let cached = 0;

/**
 * `pattern` compiled, or why it is refused: its syntax, or a program over MAX_REGEX_INSTRUCTIONS
 * (bounded from the text first, so a pattern that would compile to millions is never compiled).
 */
export function compilePattern(pattern: string): CompiledPattern {
  const known = cache.get(pattern);
  if (known) return known;
  const bound = instructionBound(pattern);
  let compiled: CompiledPattern;
  if (bound > MAX_REGEX_INSTRUCTIONS)
    compiled = {
      size: true,
      refused: `matches: the pattern could compile to ${bound > 1e9 ? 'more than 10^9' : bound} instructions (a pattern compiles to at most ${MAX_REGEX_INSTRUCTIONS}): repeat less ({n} multiplies what it repeats)`,
    };
  else {
    try {
      const matcher = RE2JS.compile(pattern);
      // Its NFA only: the library's DFA keeps up to 10,000 states of ≈ 1 KB and 4 bytes an instruction
      // each (tens of MB for one pattern), and for a large program was measured slower than the NFA it
      // falls back to. The NFA holds one set of instructions a step: its memory is bounded by the program.
      matcher.re2().dfa.failed = true;
      compiled = { matcher, instructions: matcher.re2().prog.numInst() };
    } catch (error) {
      compiled = { refused: `matches: ${(error as Error).message}`, size: false };
    }
  }
  const size = 'instructions' in compiled ? compiled.instructions : 1;
  cache.set(pattern, compiled);
  cached += size;
  for (const [key, value] of cache) {
    if (cached <= CACHE_INSTRUCTIONS || key === pattern) break;
    cache.delete(key);
    cached -= 'instructions' in value ? value.instructions : 1;
  }
  return compiled;
}

/**
 * An upper bound of the instructions RE2 compiles `pattern` to, read from its text: each atom one
 * (a character, a class, an escape, `.`), a group what it holds and two, an alternative one more,
 * a quantifier one more, a repeat `{n,m}` what it repeats (and one) m times. Never less than what
 * RE2 builds (its simplification writes `x{n,m}` as n copies of x and m - n optional ones).
 */
export function instructionBound(pattern: string): number {
  let i = 0;
  // Each open group: the size of its finished alternatives, of the current one, and of its last atom.
  const stack: { done: number; current: number; last: number }[] = [{ done: 0, current: 0, last: 0 }];
  const top = () => stack[stack.length - 1]!;
  const atom = (size: number) => {
    const t = top();
    t.current += size;
    t.last = size;
  };
  while (i < pattern.length) {
    const c = pattern[i]!;
    if (c === '\\') {
      if (pattern[i + 1] === 'Q') {
        const end = pattern.indexOf('\\E', i + 2);
        const literal = end < 0 ? pattern.length - i - 2 : end - i - 2;
        atom(Math.max(1, literal));
        i = end < 0 ? pattern.length : end + 2;
        continue;
      }
      // \p{Greek}, \x{10FFFF}: one atom
      if (pattern[i + 2] === '{') {
        const end = pattern.indexOf('}', i + 2);
        i = end < 0 ? pattern.length : end + 1;
      } else i += 2;
      atom(1);
    } else if (c === '[') {
      // a class: one instruction, whatever it holds (a `]` first is a member)
      let j = i + 1;
      if (pattern[j] === '^') j++;
      if (pattern[j] === ']') j++;
      while (j < pattern.length && pattern[j] !== ']') j += pattern[j] === '\\' || pattern.startsWith('[:', j) ? 2 : 1;
      i = j + 1;
      atom(1);
    } else if (c === '(') {
      stack.push({ done: 0, current: 0, last: 0 });
      i++;
    } else if (c === ')') {
      const group = stack.length > 1 ? stack.pop()! : top();
      atom(group.done + group.current + 2);
      i++;
    } else if (c === '|') {
      const t = top();
      t.done += t.current + 1;
      t.current = 0;
      t.last = 0;
      i++;
    } else if (c === '*' || c === '+' || c === '?') {
      const t = top();
      t.current += 1;
      t.last += 1;
      i++;
    } else if (c === '{') {
      const repeat = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i, i + 24));
      if (!repeat) {
        atom(1);
        i++;
        continue;
      }
      const min = Number(repeat[1]);
      const max = repeat[2] === undefined ? min : repeat[3] === '' ? min + 1 : Number(repeat[3]);
      const t = top();
      const repeated = (t.last + 1) * Math.max(min, max, 1);
      t.current += repeated - t.last;
      t.last = repeated;
      i += repeat[0].length;
    } else {
      atom(1);
      i++;
    }
  }
  let total = 0;
  while (stack.length) {
    const group = stack.pop()!;
    total += group.done + group.current + 2;
  }
  return total + 8;
}
