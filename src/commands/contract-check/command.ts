// `captf-runner contract check`: the image (or a directory tree) against the module contract.
import { imageError, usageError } from '../../errors.ts';
import { givenSetting } from '../../schemas/config.ts';
import { Kind } from '../../schemas/result.ts';
import { runContractCheck } from './check.ts';
import { formatContractTable } from './format.ts';

export async function contractCheckCommand(flags: Record<string, unknown>): Promise<void> {
  // Not loadSettings: without --module the module is found under --root, not at the op default.
  const setting = (name: string) => givenSetting(flags, process.env, name) as string | undefined;
  const kind = setting('kind');
  const parsedKind = kind === undefined ? undefined : Kind.safeParse(kind);
  if (parsedKind && !parsedKind.success)
    throw usageError('SettingsInvalid', `--kind must be cluster, machine or pool, not "${kind}"`);
  const report = await runContractCheck({
    root: flags.root as string | undefined,
    moduleDir: setting('module'),
    terraformPath: setting('terraform'),
    kind: parsedKind?.data,
    workdir: setting('workdir'),
    policyDir: setting('policy'),
    // The flag, never CAPTF_MODULE: an image's environment must not turn its own check into a source tree's.
    sourceTree: flags.root === undefined && flags.module !== undefined,
  });
  process.stdout.write(flags.json ? JSON.stringify(report, null, 2) + '\n' : formatContractTable(report));
  if (report.status === 'fail')
    throw imageError('the image breaks the runner contract: the report names each failed check and its fix');
}
