// restore: push a state backup back as the backend's newest version. A backend-only root (the
// module's backend.tf and nothing else), a verified backup (before init), a lineage check, a serial above the
// current one, then a pull to check the backend holds what was restored. Nothing is pushed when
// anything fails.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createReadStream, existsSync } from 'node:fs';
import { RunnerError } from '../errors.ts';
import { statePush } from '../terraform/state.ts';
import { readArtifact } from '../store/artifact-read.ts';
import { withSerial } from '../state/serial.ts';
import { summarizeState } from '../state/summary.ts';
import { emptyScan } from '../workspace/scan.ts';
import { prepareBackendWorkspace, writeNewFile } from '../workspace/workspace.ts';
import { scanModule } from '../workspace/config-files.ts';
import type { RunContext } from '../run/context.ts';
import type { OpEnding } from '../run/learned.ts';
import { artifactRefOf, backupStore, openArtifactSource } from '../run/stores.ts';
import type { ChunkStore } from '../store/store.ts';
import { checkPlaintextBackups, initStep, preflight, terraformIn } from '../steps/prepare.ts';
import { backupStep } from '../steps/backup.ts';
import { stateAfterStep, stateBeforeStep } from '../steps/state.ts';
import { ERRORED_STATE_PREFIX } from '../steps/state-recovery.ts';
import { STATE_FILE } from '../workspace/terraform-files.ts';

export async function restoreOp(ctx: RunContext): Promise<OpEnding> {
  const source = openArtifactSource(ctx, ctx.settings.backup!, 'backup');
  const version = await preflightBackendOnly(ctx);
  const workspace = await ctx.step('workspace', () =>
    prepareBackendWorkspace({
      moduleDir: ctx.settings.module,
      workdir: ctx.settings.workdir,
      statePath: ctx.settings.state,
    }),
  );
  const tf = terraformIn(ctx, { version, workspace });
  try {
    // The backup is verified before init: a damaged one is refused with nothing initialized or pulled.
    const backup = await ctx.step(
      'read backup',
      () =>
        readArtifact(source.store, source.object, {
          into: join(workspace.privateDir, 'backup'),
          expect: { kind: 'StateBackup' },
          maxBytes: ctx.settings.maxArtifactBytes,
        }),
      {
        learned: ({ manifest }) => ({ restoredFrom: artifactRefOf(source.store, source.object, manifest) }),
      },
    );
    const restored = backup.manifest;
    await initStep(ctx, { tf, workspace });
    const current = await stateBeforeStep(ctx, { tf, workspace });

    // A pg backend holds an empty state (serial 0, lineage "") before the first write: that is no state.
    const currentLineage = current.lineage || null;
    const otherLineage = currentLineage !== null && currentLineage !== restored.lineage;
    await ctx.step('decide', async () => {
      if (otherLineage && !ctx.settings.force)
        throw new RunnerError({
          kind: 'state',
          reason: 'LineageMismatch',
          message: `the backup's lineage ${restored.lineage} differs from the backend's current state (${currentLineage}): it is a backup of another state. Nothing was pushed. Pass --force only if you mean to replace that state.`,
        });
    });

    // The push replaces the current state for good (pg keeps one version): keep it first.
    if (currentLineage !== null) {
      // Retention must not take the backup being restored: if the push fails, it is still there.
      await backupStep(ctx, {
        before: current,
        inputsHash: current.recordedInputsHash ?? undefined,
        terraformVersion: version.version,
        keep: [source.object],
      });
    }

    // terraform accepts a push only above the current serial; the lineage stays the backup's.
    const serial = Math.max(current.serial ?? 0, restored.serial) + 1;
    const pushFile = join(workspace.privateDir, 'restore.tfstate');
    await writeNewFile(pushFile, withSerial(await readFile(backup.paths[STATE_FILE]!, 'utf8'), serial));
    const lockTimeout = ctx.settings.lockTimeout;
    await ctx.step('state push', () => statePush(tf, pushFile, { force: otherLineage, lockTimeout }), {
      exitCode: (r) => r.exitCode,
      starting: { mayHaveChanged: true },
    });
    // terraform (1.11, pg) stores a first push into a backend without state under a new lineage of
    // its own at serial 1, -force or not. The state exists now: a forced second push, checked above
    // (no state to protect, a serial above 1), brings back the backup's lineage.
    if (currentLineage === null)
      await ctx.step('state push (lineage)', () => statePush(tf, pushFile, { force: true, lockTimeout }), {
        exitCode: (r) => r.exitCode,
      });

    const after = await stateAfterStep(ctx, { tf, workspace, before: current });
    await ctx.step('verify', () => verifyRestored(after.file, backup.paths[STATE_FILE]!, restored.lineage));
    await forgetRestoredErroredState(ctx, source);
    return {
      outcome: 'succeeded',
      reason: 'RestoreSucceeded',
      message: `Restored backup ${source.object} (serial ${restored.serial}, lineage ${restored.lineage}) as serial ${after.serial}.`,
    };
  } finally {
    await workspace.dispose();
  }
}

/**
 * A kept errored state of the object's own store, now restored, is the state: left in the store, it
 * would refuse every later run as one not above the backend's serial (faults §4). A delete that
 * fails is a warning saying so.
 */
async function forgetRestoredErroredState(ctx: RunContext, source: { store: ChunkStore; object: string }) {
  if (!source.object.startsWith(ERRORED_STATE_PREFIX) || source.store.location !== backupStore(ctx).location) return;
  const ref = `${source.store.location}/${source.object}`;
  await source.store
    .deleteObject(source.object)
    .catch((error: unknown) =>
      ctx.warn(
        `could not delete the restored errored state ${ref} (${(error as Error).message}): every later run of the object refuses it (ErroredStateUnpushable) until it is deleted from the store`,
      ),
    );
}

/**
 * restore needs terraform, not a module with resources: the version part of the preflight, and
 * whether the module (when there is one: --state needs none) configures state encryption.
 */
async function preflightBackendOnly(ctx: RunContext) {
  return preflight(ctx, {
    check: async () => {
      const scan =
        ctx.settings.state && !existsSync(ctx.settings.module)
          ? emptyScan()
          : await scanModule(ctx.settings.module, { onCommandLine: ctx.moduleOnCommandLine });
      checkPlaintextBackups(ctx, scan);
    },
  });
}

/** The backend must now hold the backup's lineage and the same resources and outputs. */
async function verifyRestored(pulledFile: string, backupFile: string, lineage: string): Promise<void> {
  const pulled = JSON.parse(await readFile(pulledFile, 'utf8'));
  const backup = JSON.parse(await readFile(backupFile, 'utf8'));
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  const summary = await summarizeState(createReadStream(pulledFile));
  if (summary.lineage !== lineage || !same(pulled.resources, backup.resources) || !same(pulled.outputs, backup.outputs))
    throw new RunnerError({
      kind: 'state',
      reason: 'RestoreVerifyFailed',
      message:
        'after the push, the backend does not hold the backed-up state (lineage, resources or outputs differ): check the backend and retry the restore',
    });
}
