// The manifest of a chunked artifact (a plan artifact or a state backup): the single source of
// truth for its shape. contract/sections/artifacts.md describes it for readers in other languages;
// the JSON Schema is generated from ArtifactManifest.
import * as z from '../schemas/zod.ts';
import { Op, Sha256 } from '../schemas/result.ts';
import { MAX_CHUNK_BYTES, MAX_CHUNKS } from '../schemas/limits.ts';

export const ARTIFACT_API_VERSION = 'runner.captf.io/v1';

const ByteCount = z.nonNegativeInt();

/**
 * Files inside an artifact are flat (no directories) and named so that no name can escape the
 * extraction directory or hide: one path component of safe characters, never `.` or `..`.
 */
export const ArtifactFileName = z
  .string()
  .regex(/^[A-Za-z0-9._-]{1,255}$/, 'one path component of letters, digits, ".", "_" and "-"')
  .refine((name) => name !== '.' && name !== '..', 'not "." or ".."');

export const ChunkEntry = z.strictObject({
  index: z.nonNegativeInt(),
  bytes: z.number().int().positive().max(MAX_CHUNK_BYTES),
  sha256: Sha256,
});
export type ChunkEntry = z.infer<typeof ChunkEntry>;

export const FileEntry = z.strictObject({
  name: ArtifactFileName,
  bytes: ByteCount,
  sha256: Sha256.describe('sha256 of the file content'),
});
export type FileEntry = z.infer<typeof FileEntry>;

const apiVersion = z.literal(ARTIFACT_API_VERSION);

// Fields the writer computes (with apiVersion); everything else is the caller's metadata.
const computedFields = {
  object: z
    .string()
    .min(1)
    .describe('The name the artifact was written under (informational: a copy may live under another name)'),
  chunks: z.array(ChunkEntry).min(1).max(MAX_CHUNKS).describe('In index order, 0..chunkCount-1'),
  chunkCount: z.number().int().positive(),
  totalBytes: ByteCount.describe('Size of the whole gzipped payload: the sum of the chunk sizes'),
  sha256: Sha256.describe('sha256 of the whole gzipped payload (the chunks concatenated in index order)'),
  files: z.array(FileEntry).min(1).describe('Every file in the tar, and nothing else'),
  createdAt: z.iso.datetime().describe('RFC 3339 time in UTC'),
};

const commonMeta = {
  terraformVersion: z.string().min(1),
};

// apiVersion and kind lead, as in a Kubernetes object.
export const PlanArtifactManifest = z.strictObject({
  apiVersion,
  kind: z.literal('PlanArtifact'),
  ...computedFields,
  ...commonMeta,
  op: Op.optional(),
  planFile: ArtifactFileName.describe('The file holding the saved plan; its sha256 is planHash'),
  planHash: Sha256.describe('sha256 of the saved plan file: what an approval names'),
  inputsHash: Sha256.describe('The inputs hash the plan was made from'),
  // Optional so that an artifact of an earlier runner reads as what it is: apply --plan-artifact (ops/apply-artifact.ts) refuses it as unbound.
  stateLineage: z
    .string()
    .min(1)
    .nullable()
    .optional()
    .describe(
      'The lineage of the state the plan was made against; null when there was no state yet. Written by every plan op; an artifact without it is refused',
    ),
  backend: Sha256.optional().describe(
    'sha256 of the canonical JSON {"config":…,"type":…} of the backend terraform init configured: terraform applies a saved plan to this backend. Written by every plan op; an artifact without it is refused',
  ),
});
export type PlanArtifactManifest = z.infer<typeof PlanArtifactManifest>;

export const StateBackupManifest = z.strictObject({
  apiVersion,
  kind: z.literal('StateBackup'),
  ...computedFields,
  ...commonMeta,
  op: Op.describe('The op that took the backup before changing anything'),
  stateFile: ArtifactFileName.describe('The file holding the pulled state'),
  serial: z.nonNegativeInt().describe("The state's serial when it was backed up"),
  lineage: z.string().min(1).describe("The state's lineage"),
  inputsHash: Sha256.optional().describe('The inputs hash of the op that took the backup'),
});
export type StateBackupManifest = z.infer<typeof StateBackupManifest>;

/** Cross-field rules: what makes a manifest self-consistent, before any chunk is read. */
function checkConsistency(manifest: PlanArtifactManifest | StateBackupManifest, ctx: z.RefinementCtx) {
  const issue = (message: string, path: PropertyKey[]) => ctx.addIssue({ code: 'custom', message, path });
  if (manifest.chunkCount !== manifest.chunks.length) {
    issue(`chunkCount is ${manifest.chunkCount} but ${manifest.chunks.length} chunks are listed`, ['chunkCount']);
  }
  manifest.chunks.forEach((chunk, position) => {
    if (chunk.index !== position)
      issue(`chunk at position ${position} has index ${chunk.index}`, ['chunks', position, 'index']);
  });
  const sum = manifest.chunks.reduce((total, chunk) => total + chunk.bytes, 0);
  if (sum !== manifest.totalBytes)
    issue(`totalBytes is ${manifest.totalBytes} but the chunks add up to ${sum}`, ['totalBytes']);

  const names = new Set<string>();
  manifest.files.forEach((file, position) => {
    if (names.has(file.name)) issue(`file "${file.name}" is listed twice`, ['files', position, 'name']);
    names.add(file.name);
  });
  const mainFile = manifest.kind === 'PlanArtifact' ? manifest.planFile : manifest.stateFile;
  const mainField = manifest.kind === 'PlanArtifact' ? 'planFile' : 'stateFile';
  const listed = manifest.files.find((file) => file.name === mainFile);
  if (!listed) issue(`${mainField} "${mainFile}" is not in files`, [mainField]);
  if (manifest.kind === 'PlanArtifact' && listed && listed.sha256 !== manifest.planHash) {
    issue(`planHash differs from the sha256 of planFile "${mainFile}"`, ['planHash']);
  }
}

export const ArtifactManifest = z
  .discriminatedUnion('kind', [PlanArtifactManifest, StateBackupManifest])
  .superRefine(checkConsistency);
export type ArtifactManifest = z.infer<typeof ArtifactManifest>;
export type ArtifactKind = ArtifactManifest['kind'];
export type ManifestOfKind<K extends ArtifactKind> = Extract<ArtifactManifest, { kind: K }>;

type ComputedField = 'apiVersion' | keyof typeof computedFields;
/** What the caller of writeArtifact supplies: the kind and its metadata; the rest is computed. */
export type ArtifactMeta = Omit<PlanArtifactManifest, ComputedField> | Omit<StateBackupManifest, ComputedField>;

const computedMask = Object.fromEntries(['apiVersion', ...Object.keys(computedFields)].map((key) => [key, true])) as {
  [K in ComputedField]: true;
};
/** Validates metadata before anything is written, so a bad call fails before the first chunk. */
export const ArtifactMetaSchema = z.discriminatedUnion('kind', [
  PlanArtifactManifest.omit(computedMask),
  StateBackupManifest.omit(computedMask),
]);
