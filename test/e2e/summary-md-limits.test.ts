// The Markdown summary (--summary-md, GitHub's step summary) with the real terraform 1.11.4: module
// text never becomes a link, and a summary stays under GitHub's 1 MiB, saying what it left out.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { explain, scenario } from '../support/runner.ts';

/** The text outside code spans (CommonMark: a run of backticks closes at the next run as long) and fenced blocks. */
function outsideCode(markdown: string): string {
  const withoutBlocks = markdown.replace(/^(`{3,})[^\n]*\n[^]*?^\1\s*$/gm, '');
  let out = '';
  for (let at = 0; at < withoutBlocks.length; ) {
    const open = /`+/g;
    open.lastIndex = at;
    const start = open.exec(withoutBlocks);
    if (!start) return out + withoutBlocks.slice(at);
    out += withoutBlocks.slice(at, start.index);
    const close = new RegExp(`(?<!\`)${start[0]}(?!\`)`, 'g');
    close.lastIndex = start.index + start[0].length;
    const end = close.exec(withoutBlocks);
    if (!end) return out + withoutBlocks.slice(start.index);
    at = end.index + end[0].length;
  }
  return out;
}

/** What GitHub autolinks outside code: URLs, www., e-mail addresses. */
const AUTOLINK = /(?:https?|ftp):\/\/|www\.|[A-Za-z0-9._+-]+@[A-Za-z0-9_-]+\.[A-Za-z0-9]/;

describe('the Markdown summary: no link from module text, at most 1 MiB', () => {
  it('a validation message with a URL, a www. address and an e-mail address: none is a link in the summary', async (t) => {
    const s = await scenario(t, {
      'main.tf': `variable "size" {
  type = number
  validation {
    condition     = var.size < 10
    error_message = "Too big: approve at https://evil.example/approve or www.evil.example, or mail admin@evil.example."
  }
}
resource "terraform_data" "x" { input = var.size }
`,
    });
    await s.setInputs({ 'terraform.tfvars.json': { size: 20 } });
    const summary = join(s.dir, 'summary.md');
    const run = await s.run('plan', ['--summary-md', summary, '--artifacts', join(s.dir, 'artifacts')]);
    assert.notEqual(run.exitCode, 0, explain(run));
    const markdown = await readFile(summary, 'utf8');
    assert.match(markdown, /evil\.example\/approve/, markdown);
    const outside = outsideCode(markdown);
    assert.doesNotMatch(outside, AUTOLINK, outside);
  });

  it('50 resource keys of 24,000 characters: the summary stays under 1 MiB and says what it left out', async (t) => {
    const s = await scenario(t, {
      'main.tf': `resource "terraform_data" "big" {
  for_each = toset([for i in range(50) : format("%02d%s", i, join("", [for j in range(1000) : "k-long-key-abcdefghijk-"]))])
  input    = each.key
}
`,
    });
    const summary = join(s.dir, 'summary.md');
    const run = await s.run('plan', ['--summary-md', summary, '--artifacts', join(s.dir, 'artifacts')]);
    assert.equal(run.exitCode, 0, explain(run));
    assert.equal(run.result?.plan?.counts.create, 50);
    const markdown = await readFile(summary);
    assert.ok(markdown.length < 1024 * 1024, `the summary is ${markdown.length} bytes`);
    assert.match(markdown.toString('utf8'), /more characters: see the result/);
    assert.match(markdown.toString('utf8'), /Every change \(50\)/);
  });
});
