// unlock: release a state lock whose holder is gone, and only while the lock still carries the
// given id. How depends on the backend (contract/sections/faults.md, "Locks"):
// - local (--state): terraform force-unlock cannot release another process's local lock, so the
//   runner checks the lock info names the id, proves the holder is gone by taking the lock itself
//   (which clears the stale info), and refuses while the holder lives.
// - pg: advisory locks have no id and end with their holder's connection: refused (UnlockUnsupported).
// - other backends record ids: terraform force-unlock, which itself refuses an id that does not match.
import { RunnerError } from '../errors.ts';
import { forceUnlock, localLockInfoPath, probeLock, readLocalLockInfo, type LockReport } from '../terraform/lock.ts';
import type { RunContext } from '../run/context.ts';
import type { OpEnding } from '../run/learned.ts';
import { prepareBackendWorkspace } from '../workspace/workspace.ts';
import { initStep, preflight, terraformIn } from '../steps/prepare.ts';
import { scanModule } from '../workspace/config-files.ts';

const describeHolder = (lock: LockReport) =>
  `${lock.who ?? 'an unknown holder'}${lock.operation ? ` (${lock.operation})` : ''}${lock.created ? ` since ${lock.created}` : ''}`;

export async function unlockOp(ctx: RunContext): Promise<OpEnding> {
  const lockId = ctx.settings.lockId!;
  const statePath = ctx.settings.state;
  if (!statePath) {
    const backend = (await scanModule(ctx.settings.module, { onCommandLine: ctx.moduleOnCommandLine })).backend;
    if (backend === 'pg')
      throw new RunnerError({
        kind: 'lock',
        reason: 'UnlockUnsupported',
        message:
          "the pg backend holds its lock as a PostgreSQL advisory lock of the holder's session: it has no lock id and force-unlock cannot free it. The lock ends when the holder's connection ends (stop the runner that holds it, or terminate its backend with pg_terminate_backend).",
      });
  }
  const version = await preflight(ctx);

  if (statePath) {
    // Checked before anything runs: a lock that is gone or names another id is never touched.
    const info = await ctx.step('lock info', async () => {
      const found = await readLocalLockInfo(statePath);
      if (found && found.id !== lockId) {
        throw new RunnerError({
          kind: 'lock',
          reason: 'LockIdMismatch',
          message: `the state lock carries id ${found.id ?? '(none)'}, held by ${describeHolder(found)}, not ${lockId}: nothing was released. Check the lock id again (result.lock.id of the run that met the lock).`,
          detail: { lock: found },
        });
      }
      return found;
    });
    if (!info) {
      return {
        outcome: 'noChanges',
        reason: 'NotLocked',
        message: `The state ${statePath} is not locked (no ${localLockInfoPath(statePath)}): nothing to release.`,
      };
    }
  }

  const workspace = await ctx.step('workspace', () =>
    prepareBackendWorkspace({ moduleDir: ctx.settings.module, workdir: ctx.settings.workdir, statePath }),
  );
  try {
    const tf = terraformIn(ctx, { version, workspace });
    await initStep(ctx, { tf, workspace });
    if (statePath) {
      await ctx.step('force-unlock', async () => {
        const holder = await probeLock(tf);
        if (holder) {
          throw new RunnerError({
            kind: 'lock',
            reason: 'LockHeld',
            message: `the state lock ${lockId} is held by a live process (${describeHolder(holder)}): a local lock ends with its holder, and the runner never takes it away from a live one. Stop that run, then run unlock again.`,
            detail: { lock: holder },
          });
        }
        const left = await readLocalLockInfo(statePath);
        if (left?.id === lockId)
          throw new RunnerError({
            kind: 'terraform',
            reason: 'UnlockFailed',
            message: `terraform took and released the lock but ${localLockInfoPath(statePath)} still names ${lockId}: remove it by hand once you have checked no run holds the state.`,
            detail: { lock: left },
          });
      });
      return {
        outcome: 'succeeded',
        reason: 'Unlocked',
        message: `The stale state lock ${lockId} was released: its holder was gone.`,
        learned: { mayHaveChanged: true },
      };
    }
    await ctx.step('force-unlock', () => forceUnlock(tf, lockId), {
      exitCode: (r) => r.exitCode,
      starting: { mayHaveChanged: true },
    });
    return { outcome: 'succeeded', reason: 'Unlocked', message: `The state lock ${lockId} was released.` };
  } finally {
    await workspace.dispose();
  }
}
