// OpenTofu state encryption and the runner's copies of the state (pure). `tofu state pull` prints
// the state decrypted, so a backup the runner takes holds in clear what the backend holds
// encrypted; a plan artifact holds the saved plan. Where the module or the environment configures
// encryption, the ops that keep such copies refuse unless the person accepts them in clear; a
// destroy (a teardown never wedges) keeps its backup and warns.
import type { Op } from '../schemas/result.ts';

/** Where encryption is configured: the module's `terraform { encryption }` blocks, and TF_ENCRYPTION. */
export function encryptionSettings(
  blocks: readonly { file: string; line: number }[],
  env: NodeJS.ProcessEnv,
): string[] {
  const found = blocks.map((block) => `${block.file}:${block.line}: terraform { encryption }`);
  if (env.TF_ENCRYPTION) found.push('TF_ENCRYPTION in the environment');
  return found;
}

/** The ops that keep a copy of the state outside the backend: refused under encryption unless allowed. */
const KEEPS_STATE_COPIES: ReadonlySet<Op> = new Set(['apply', 'plan', 'restore']);

export type PlaintextBackupDecision =
  | { action: 'proceed' }
  | { action: 'warn'; message: string }
  | { action: 'refuse'; message: string };

export function plaintextBackupDecision(
  op: Op,
  settings: readonly string[],
  allowed: boolean,
): PlaintextBackupDecision {
  if (settings.length === 0 || !(KEEPS_STATE_COPIES.has(op) || op === 'destroy')) return { action: 'proceed' };
  const what = `OpenTofu state encryption is configured (${settings.join('; ')}), and the runner keeps copies of the state outside the backend: backups taken with \`state pull\`, which prints the state decrypted, and plan artifacts holding the saved plan`;
  if (op === 'destroy')
    return {
      action: 'warn',
      message: `${what}. The destroy takes its backup in clear (a teardown never waits on it): protect the backup store like the state's keys.`,
    };
  if (allowed)
    return {
      action: 'warn',
      message: `${what}. --allow-plaintext-backups accepts them in clear: protect the backup and artifact stores like the state's keys.`,
    };
  return {
    action: 'refuse',
    message: `${what}: they would hold in clear what the backend holds encrypted. Nothing was touched. Pass --allow-plaintext-backups (CAPTF_ALLOW_PLAINTEXT_BACKUPS=true) to accept backups in clear, and keep the backup and artifact stores as protected as the state's keys; or remove the encryption setting.`,
  };
}
