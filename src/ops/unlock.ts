// unlock: force-unlock the state, only while the lock still carries the given id. terraform itself
// refuses an id that does not match the lock on backends that record ids. pg's advisory locks have
// no id and end with their holder's connection: force-unlock cannot free them, so it is refused.
import { usageError, RunnerError } from '../errors.ts';
import { forceUnlock } from '../terraform/state.ts';
import type { RunContext } from './context.ts';
import type { OpEnding, ResultFields } from './run.ts';
import { prepareBackendWorkspace } from '../workspace/workspace.ts';
import { initStep, preflight, terraformIn } from './steps.ts';
import { scanModule } from '../workspace/workspace.ts';

export async function unlockOp(ctx: RunContext, fields: ResultFields): Promise<OpEnding> {
  const lockId = ctx.settings.lockId;
  if (!lockId) throw usageError('LockIdMissing', 'unlock needs --lock-id ID: the lock id terraform reported (result.lock.id of the run that met the lock)');
  if (!ctx.settings.state) {
    const backend = (await scanModule(ctx.settings.module)).backend;
    if (backend === 'pg')
      throw new RunnerError({
        kind: 'lock',
        reason: 'UnlockUnsupported',
        message: 'the pg backend holds its lock as a PostgreSQL advisory lock of the holder\'s session: it has no lock id and force-unlock cannot free it. The lock ends when the holder\'s connection ends (stop the runner that holds it, or terminate its backend with pg_terminate_backend).',
      });
  }
  const version = await preflight(ctx, fields, { module: false });
  const workspace = await ctx.step('workspace', () => prepareBackendWorkspace({ moduleDir: ctx.settings.module, workdir: ctx.settings.workdir, statePath: ctx.settings.state }));
  try {
    const tf = terraformIn(ctx, version, workspace);
    await initStep(ctx, tf);
    ctx.mutationStarted = true;
    await ctx.step('force-unlock', () => forceUnlock(tf, lockId), (r) => r.exitCode);
    return { outcome: 'succeeded', reason: 'Unlocked', message: `The state lock ${lockId} was released.` };
  } finally {
    await workspace.dispose();
  }
}
