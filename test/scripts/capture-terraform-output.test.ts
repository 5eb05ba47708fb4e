// The captured terraform output (test/fixtures/terraform-output/) must be what terraform prints for the
// case's module as the capture script writes it today: a case whose module changed without a re-capture
// leaves diagnostics pointing at bytes the module no longer has there, and the tests that read them then
// check the runner against output no terraform would print.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CASES } from '../../scripts/generators/capture-terraform-output/cases.ts';
import { OUT_DIR } from '../../scripts/generators/capture-terraform-output/workdir.ts';

interface Diagnostic {
  range?: { filename: string; start: { line: number; column: number; byte: number }; end: { byte: number } };
  snippet?: { code: string; highlight_start_offset: number; highlight_end_offset: number };
}

/** The diagnostics of a -json capture that name a range of a file and show its code. */
function rangedDiagnostics(dir: string): Diagnostic[] {
  const path = join(dir, 'json-stdout.txt');
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('{"@level"'))
    .map((line) => JSON.parse(line) as { diagnostic?: Diagnostic })
    .flatMap((message) => (message.diagnostic?.range && message.diagnostic.snippet ? [message.diagnostic] : []));
}

describe('the captured terraform output', () => {
  const checked: string[] = [];
  for (const c of CASES) {
    if (typeof c.files === 'function') continue;
    const files = c.files;
    const diagnostics = rangedDiagnostics(join(OUT_DIR, c.name));
    if (diagnostics.length === 0) continue;
    checked.push(c.name);
    it(`${c.name}: each diagnostic's range is where its highlighted code is in the case's module`, () => {
      for (const { range, snippet } of diagnostics) {
        const source = files[range!.filename];
        if (source === undefined) continue;
        const bytes = Buffer.from(source);
        const highlighted = Buffer.from(snippet!.code).subarray(
          snippet!.highlight_start_offset,
          snippet!.highlight_end_offset,
        );
        assert.equal(
          bytes.subarray(range!.start.byte, range!.end.byte).toString(),
          highlighted.toString(),
          `${c.name}/json-stdout.txt is older than its module: re-capture it with ` +
            `npx tsx scripts/generators/capture-terraform-output.ts --case ${c.name}`,
        );
        const lineStart = bytes.subarray(0, range!.start.byte).lastIndexOf(0x0a) + 1;
        assert.equal(bytes.subarray(0, lineStart).toString().split('\n').length, range!.start.line);
        assert.equal(range!.start.byte - lineStart + 1, range!.start.column);
      }
    });
  }
  it('finds captured diagnostics to check', () => {
    assert.ok(checked.length >= 5, `cases with ranged diagnostics: ${checked.join(', ')}`);
  });
});
