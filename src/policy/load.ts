// Reads a policy directory: the only I/O of policies. The directory travels in the image; its
// entries are read strictly, so that nothing but the policy files the image author meant is
// read: every entry is a regular file named *.yaml, *.yml or *.json (no symbolic link, no
// subdirectory, no device or FIFO), of bounded size and number. A symbolic link could point at a
// mounted secret (a service account token) whose text a parse error would then quote.
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { NotRegularFileError, openRegularFile } from '../util/regular-file.ts';
import { policyDirMissing, policyInvalid, type PolicyProblem } from './problems.ts';

const POLICY_EXTENSIONS = ['.yaml', '.yml', '.json'] as const;
export const MAX_POLICY_FILES = 100;
export const MAX_POLICY_FILE_BYTES = 1024 * 1024;

export interface PolicySource {
  /** The file's path (the directory joined with its name). */
  file: string;
  text: string;
}

const isPolicyName = (name: string) =>
  !name.startsWith('.') &&
  POLICY_EXTENSIONS.some((extension) => name.endsWith(extension) && name.length > extension.length);

/**
 * The policy files of `dir` in the order their names sort (code units), or the problems of all
 * its entries at once (ImageInvalid). A directory without any policy file is refused: an image
 * that meant to carry policies and carries none must not run as if it had none.
 */
export async function readPolicyDir(dir: string): Promise<PolicySource[]> {
  let names: string[];
  try {
    names = (await readdir(dir)).sort();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR')
      throw policyDirMissing(dir, code === 'ENOENT' ? 'does not exist' : 'is not a directory');
    throw policyInvalid(dir, [
      { file: dir, message: `the policy dir cannot be read (${code ?? (error as Error).message})` },
    ]);
  }
  const problems: PolicyProblem[] = [];
  const sources: PolicySource[] = [];
  if (names.length > MAX_POLICY_FILES)
    throw policyInvalid(dir, [
      { file: dir, message: `${names.length} entries; a policy dir holds at most ${MAX_POLICY_FILES} files` },
    ]);
  for (const name of names) {
    const file = join(dir, name);
    if (!isPolicyName(name)) {
      problems.push({
        file,
        message: `not a policy file: a policy dir holds only files named *.yaml, *.yml or *.json (not hidden); move it elsewhere in the image`,
      });
      continue;
    }
    const read = await readPolicyFile(file);
    if (typeof read === 'string') problems.push({ file, message: read });
    else sources.push(read);
  }
  if (problems.length) throw policyInvalid(dir, problems);
  if (sources.length === 0)
    throw policyInvalid(dir, [
      {
        file: dir,
        message: 'the policy dir holds no policy file: add *.yaml, *.yml or *.json files, or remove the dir',
      },
    ]);
  return sources;
}

/** Why the runner refuses an entry that is no regular file, in the words of a policy dir. */
const NOT_A_POLICY_FILE: Record<string, string> = {
  'a symbolic link': 'a symbolic link: policy files must be regular files in the policy dir itself',
  'a directory': 'a directory: policy files are read from the policy dir itself, never from subdirectories',
};

/** The file's text, or why it is refused. The file opened is judged (util/regular-file.ts), not a name that could change. */
async function readPolicyFile(file: string): Promise<PolicySource | string> {
  let opened;
  try {
    opened = await openRegularFile(file);
  } catch (error) {
    if (error instanceof NotRegularFileError)
      return NOT_A_POLICY_FILE[error.found] ?? 'not a regular file (a device, FIFO or socket)';
    return `cannot be opened (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
  }
  const { handle, stat } = opened;
  try {
    if (stat.size > MAX_POLICY_FILE_BYTES)
      return `${stat.size} bytes; a policy file is at most ${MAX_POLICY_FILE_BYTES} bytes`;
    const bytes = Buffer.alloc(stat.size);
    const { bytesRead } = await handle.read(bytes, 0, stat.size, 0);
    if (bytesRead !== stat.size) return 'changed while it was read';
    try {
      return { file, text: new TextDecoder('utf-8', { fatal: true }).decode(bytes) };
    } catch {
      return 'not UTF-8 text';
    }
  } finally {
    await handle.close();
  }
}
