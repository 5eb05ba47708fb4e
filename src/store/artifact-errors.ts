// How the artifact code fails: every refusal names the object and its store, what is wrong and
// what to do. One place, so that a reader and a writer say the same thing the same way.
import * as z from '../schemas/zod.ts';
import { RunnerError } from '../errors.ts';
import type { ArtifactKind } from './manifest.ts';
import type { ChunkStore } from './store.ts';

type FailureReason = 'ArtifactIncomplete' | 'ArtifactCorrupt' | 'ArtifactMismatch' | 'ArtifactUnsafe';

/** An error about one object: the reason, the problem (after the object's name), the fix and detail. */
export type Failure = (
  reason: FailureReason,
  problem: string,
  fix?: string,
  detail?: Record<string, unknown>,
) => RunnerError;

const LABELS: Record<ArtifactKind, string> = { PlanArtifact: 'plan artifact', StateBackup: 'state backup' };
const FIXES: Record<ArtifactKind, string> = {
  PlanArtifact: 'Run a new plan and approve it.',
  StateBackup: 'Restore from another complete backup.',
};

/** Errors about one object, each saying which object, what is wrong and what to do. */
export function failure(store: ChunkStore, object: string, kind: ArtifactKind | undefined): Failure {
  const label = kind ? LABELS[kind] : 'artifact';
  return (reason, problem, fix, detail) =>
    new RunnerError({
      kind: 'artifact',
      // A backup that is not one this runner restores: no new plan helps (ArtifactMismatch's exit 5 says it would), another backup does.
      reason: reason === 'ArtifactMismatch' && kind === 'StateBackup' ? 'BackupMismatch' : reason,
      message: `${label} "${object}" in ${store.location} ${problem}. ${fix ?? (kind ? FIXES[kind] : 'Write it again.')}`,
      detail: { location: store.location, object, ...detail },
    });
}

/** Over the limit a reader accepts (a reader refuses it before reading a chunk, a writer before its manifest), with the setting that raises it. */
export function tooLarge(
  store: ChunkStore,
  object: string,
  kind: ArtifactKind,
  problem: string,
  maxBytes: number,
): RunnerError {
  return new RunnerError({
    kind: 'artifact',
    reason: 'ArtifactTooLarge',
    message: `${LABELS[kind]} "${object}" in ${store.location} ${problem}, more than the ${maxBytes} an artifact may hold. If it is genuine, raise --max-artifact-bytes (CAPTF_MAX_ARTIFACT_BYTES)`,
    detail: { location: store.location, object, maxBytes },
  });
}

export const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

export const internalError = (message: string) =>
  new RunnerError({ kind: 'internal', reason: 'InternalError', message });

/** What the runner itself builds (metadata, a manifest) must be valid: anything else is a bug of the runner. */
export function parseOrInternal<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw internalError(`invalid ${what}: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

/** A complete object under the name: artifacts are never overwritten. */
export function artifactExists(location: string, object: string, detail?: Record<string, unknown>): RunnerError {
  return new RunnerError({
    kind: 'artifact',
    reason: 'ArtifactExists',
    message: `"${object}" in ${location} is already a complete artifact and artifacts are never overwritten: write under a new name or delete it first`,
    detail: { location, object, ...detail },
  });
}
