import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from '@bufbuild/cel';
import { celSyntaxProblem } from '../../src/policy/cel-syntax.ts';

/** The problem of `source`, which must not parse. */
function problem(source: string): string {
  try {
    parse(source);
  } catch (error) {
    return celSyntaxProblem(source, (error as Error).message);
  }
  assert.fail(`${source} parses`);
}

describe('celSyntaxProblem', () => {
  it('points at the place with a caret under it, as cel-go does', () => {
    const cases: [source: string, expected: string][] = [
      [
        'change.actions.exists(a, a == "delete"',
        'line 1, column 39: missing ")" to close the "(" at column 22\n | change.actions.exists(a, a == "delete"\n | ......................................^',
      ],
      [
        'size(change.actions]',
        'line 1, column 20: "]" cannot close the "(" at column 5: a ")" is missing before it\n | size(change.actions]\n | ...................^',
      ],
      [
        'change.address == "a"\n  && change.type == "x")',
        'line 2, column 24: ")" closes nothing\n |   && change.type == "x")\n | .......................^',
      ],
      [
        'change.name == "abc',
        'line 1, column 16: the string that starts here does not end (a quote is missing)\n | change.name == "abc\n | ...............^',
      ],
      [
        'change.kind in ',
        'line 1, column 15: the expression ends after "in": something must follow it\n | change.kind in\n | ..............^',
      ],
      [
        'change.address.startsWith("x") &&& true',
        'line 1, column 32: found & but expecting end of input\n | change.address.startsWith("x") &&& true\n | ...............................^',
      ],
    ];
    for (const [source, expected] of cases) assert.equal(problem(source), expected, source);
  });

  it('brackets inside strings and comments, raw and triple-quoted strings, are not counted', () => {
    assert.match(
      problem("change.name == \"(\" && change.type == '[' // (\n  && r\"\\\" == \"\"'''\n)''' +"),
      /^line 3, column 7: the expression ends after "\+"/,
    );
  });
});
