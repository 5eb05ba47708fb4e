// Reads a directory-store artifact with no runner code (chunks in index order → gunzip → tar
// entries), so tests check what the runner wrote independently of how it reads it back.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import tar from 'tar-stream';

export async function unpackArtifactDir(
  objectDir: string,
): Promise<{ manifest: Record<string, unknown>; files: Record<string, Buffer>; chunks: string[] }> {
  const manifest = JSON.parse(await readFile(join(objectDir, 'manifest.json'), 'utf8')) as Record<string, unknown>;
  const chunks = (await readdir(objectDir)).filter((name) => /^chunk-\d{5}$/.test(name)).sort();
  const payload = Buffer.concat(await Promise.all(chunks.map((name) => readFile(join(objectDir, name)))));
  const files: Record<string, Buffer> = {};
  const extract = tar.extract();
  Readable.from([gunzipSync(payload)]).pipe(extract);
  for await (const entry of extract) {
    const parts: Buffer[] = [];
    for await (const piece of entry) parts.push(piece as Buffer);
    files[entry.header.name] = Buffer.concat(parts);
  }
  return { manifest, files, chunks };
}
