// What a document given as a plan's JSON is when it is not one (pure but peekHead): the files
// people mistake for it, each named with the command that makes the right one. Told from its first
// bytes, before the classifier reads it: a state would otherwise classify as a plan of unknown keys.
import type { ByteSource } from '../json/select-json.ts';

/** How many bytes of a document misfedDocument reads. */
export const DOCUMENT_HEAD_BYTES = 1024;

const MAKE_PLAN_JSON = 'make it with terraform plan -out=PLANFILE, then terraform show -json PLANFILE > plan.json';

const MISTAKEN: readonly { test: (head: string) => boolean; what: string; fix: string }[] = [
  // A saved plan is a zip archive.
  {
    test: (head) => head.startsWith('PK\x03\x04'),
    what: 'a binary plan file (terraform plan -out)',
    fix: 'make its JSON document with terraform show -json PLANFILE > plan.json',
  },
  {
    test: (head) => /^\s*\{\s*"@(?:level|message|module|timestamp)"\s*:/.test(head),
    what: "terraform plan -json's output (its messages, one JSON object a line)",
    fix: MAKE_PLAN_JSON,
  },
  {
    test: (head) => /^\s*\{\s*"version"\s*:\s*\d+\s*,/.test(head) && /"lineage"\s*:/.test(head),
    what: 'a terraform state (terraform.tfstate)',
    fix: MAKE_PLAN_JSON,
  },
  {
    test: (head) =>
      /^\s*\{\s*"format_version"\s*:\s*"[^"]*"\s*,\s*"terraform_version"\s*:\s*"[^"]*"\s*,\s*"values"\s*:/.test(head) ||
      /^\s*\{\s*"format_version"\s*:\s*"[^"]*"\s*\}\s*$/.test(head),
    what: 'the JSON of a state (terraform show -json without a plan file)',
    fix: MAKE_PLAN_JSON,
  },
];

/** What the document that starts with `head` is instead of a plan's JSON document, with the fix; undefined when it may be a plan. */
export function misfedDocument(head: Uint8Array): { what: string; fix: string } | undefined {
  const text = Buffer.from(head).toString('latin1');
  const found = MISTAKEN.find((kind) => kind.test(text));
  return found && { what: found.what, fix: found.fix };
}

/** The first `size` bytes of `source` (fewer when it is shorter), and the whole source again, those bytes included. */
export async function peekHead(source: ByteSource, size: number): Promise<{ head: Buffer; source: ByteSource }> {
  const iterator = source[Symbol.asyncIterator]();
  const read: Buffer[] = [];
  let length = 0;
  let ended = false;
  while (length < size) {
    const next = await iterator.next();
    if (next.done) {
      ended = true;
      break;
    }
    const chunk = typeof next.value === 'string' ? Buffer.from(next.value, 'utf8') : Buffer.from(next.value);
    read.push(chunk);
    length += chunk.length;
  }
  async function* whole(): AsyncGenerator<Uint8Array> {
    yield* read;
    if (ended) return;
    for (let next = await iterator.next(); !next.done; next = await iterator.next())
      yield typeof next.value === 'string' ? Buffer.from(next.value, 'utf8') : next.value;
  }
  return { head: Buffer.concat(read).subarray(0, size), source: whole() };
}
