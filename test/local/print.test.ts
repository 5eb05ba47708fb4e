import { test } from 'node:test';
import assert from 'node:assert/strict';
import { say } from '../../src/local/print.ts';

/** What `say` writes to stdout. */
function printed(...lines: string[]): string {
  const write = process.stdout.write;
  let out = '';
  process.stdout.write = ((chunk: string) => {
    out += chunk;
    return true;
  }) as typeof process.stdout.write;
  try {
    say(...lines);
  } finally {
    process.stdout.write = write;
  }
  return out;
}

test('say prints one line per line, escaping what would act on the terminal instead of showing', () => {
  // An address a module can make: a for_each key holding a title-setting escape, a colour, a lone CR, a bidi override.
  const address = 'terraform_data.x["\u001b]0;owned\u0007\u001b[31m\rrm\u202e"]';
  assert.equal(
    printed(`  destructive: ${address} (delete)`, 'two\nlines'),
    '  destructive: terraform_data.x["\\x1b]0;owned\\x07\\x1b[31m\\rrm\\u202e"] (delete)\ntwo\\nlines\n',
  );
  assert.equal(printed('plain – text ✓', ''), 'plain – text ✓\n\n');
});
