// The pod's termination message: the outcome reaches the controller even when the API path failed.
// Kubernetes keeps at most 4096 bytes, so the compact form drops detail until it fits.
import { writeFile } from 'node:fs/promises';
import type { Result } from '../schemas/result.ts';
import type { Masker } from '../masking/mask.ts';
import { maskResult, warnedOfSecretWords } from '../masking/mask-result.ts';
import { printableJson } from './printable.ts';
import { CUTS, maskThenCut } from '../masking/boundary.ts';

const TERMINATION_MESSAGE_LIMIT = 4096;

/** The compact result: always valid JSON, at most `limit` bytes (printable: printable.ts), long lists cut with a count of what was left out. */
export function compactResult(unmasked: Result, masker: Masker, limit = TERMINATION_MESSAGE_LIMIT): string {
  const result = maskResult(masker, unmasked);
  // The texts it cuts are cut from the unmasked result at the boundary (masked whole, then cut: a secret
  // cut in two would match no longer, and its start would show), each masked once whatever the form tried.
  const maskedOnce = new Map<string, string>();
  const once = {
    mask: (text: string) => maskedOnce.get(text) ?? maskedOnce.set(text, masker.mask(text)).get(text)!,
  };
  const cut = (text: string, limit: number) => maskThenCut(once, text, limit);
  const warned = warnedOfSecretWords(masker, unmasked).warnings;
  const denied = unmasked.plan?.policy?.denied ?? [];
  const killed = unmasked.killedApply?.addresses ?? [];
  const destructive = result.plan?.destructive ?? [];
  const actions = result.plan?.actions ?? [];
  const policy = result.plan?.policy;
  const base = {
    apiVersion: result.apiVersion,
    op: result.op,
    outcome: result.outcome,
    reason: result.reason,
    exitCode: result.exitCode,
    inputsHash: result.inputsHash,
    approvalHash: result.approvalHash,
    stateInputsHash: result.stateInputsHash,
    planHash: result.planHash,
    applied: result.applied,
    mayHaveChanged: result.mayHaveChanged,
    error: result.error && { kind: result.error.kind, reason: result.error.reason, step: result.error.step },
    annotations: result.annotations,
    destructiveTotal: result.plan?.destructiveTotal,
    actionsTotal: result.plan?.actionsTotal,
    unreviewedTotal: result.approval?.unreviewedTotal,
  };
  // Try richer forms first; each step down keeps fewer entries, fewer warnings and a shorter message
  // (entries, action entries, warnings; the message cut to the length at the same place of CUTS.terminationMessage).
  const forms = [
    [destructive.length, 5, 3],
    [20, 5, 2],
    [5, 2, 1],
    [0, 0, 0],
    [0, 0, 0],
  ] as const;
  for (const [form, [entries, actionEntries, warnings]] of forms.entries()) {
    const messageLength = CUTS.terminationMessage[form]!;
    const kept = destructive.slice(0, entries).map((d) => ({
      address: d.address,
      action: d.action,
      ...(d.deposed ? { deposed: d.deposed } : {}),
      ...(d.previousAddress ? { previousAddress: d.previousAddress } : {}),
    }));
    const candidate = {
      ...base,
      message: cut(unmasked.message, messageLength),
      destructive: kept,
      destructiveOmitted: (result.plan?.destructiveTotal ?? 0) - kept.length,
      ...(actions.length
        ? {
            actions: actions.slice(0, actionEntries).map((a) => ({ address: a.address, trigger: a.trigger })),
            actionsOmitted: (result.plan?.actionsTotal ?? 0) - Math.min(actionEntries, actions.length),
          }
        : {}),
      // What the policy found: a denial says what must change instead, so its message travels (cut like the others).
      ...(policy && {
        policy: {
          denied: policy.denied.slice(0, actionEntries).map((d, index) => ({
            rule: d.rule,
            ...(d.address !== undefined && { address: d.address }),
            message: cut(denied[index]!.message, CUTS.terminationText),
          })),
          deniedTotal: policy.deniedTotal,
          approvalRequired: policy.approvalRequired
            .slice(0, actionEntries)
            .map((a) => ({ rule: a.rule, ...(a.address !== undefined && { address: a.address }) })),
          approvalRequiredTotal: policy.approvalRequiredTotal,
        },
      }),
      // A killed apply's marker: what may exist outside the state reaches the controller too.
      ...(result.killedApply && {
        killedApply: {
          startedAt: result.killedApply.startedAt,
          addresses: killed.slice(0, actionEntries).map((a) => cut(a, CUTS.terminationText)),
          addressesLeftOut:
            result.killedApply.addressesLeftOut +
            result.killedApply.addresses.length -
            Math.min(actionEntries, result.killedApply.addresses.length),
        },
      }),
      ...(warnings && result.warnings.length
        ? { warnings: warned.slice(-warnings).map((w) => cut(w, CUTS.terminationText)) }
        : {}),
    };
    const text = printableJson(JSON.stringify(candidate));
    if (Buffer.byteLength(text) <= limit) return text;
  }
  return printableJson(
    JSON.stringify({
      apiVersion: result.apiVersion,
      op: result.op,
      outcome: result.outcome,
      reason: result.reason,
      exitCode: result.exitCode,
    }),
  );
}

/** Best effort: a local run has no /dev/termination-log, and that is fine. */
export async function writeTerminationMessage(path: string, result: Result, masker: Masker): Promise<boolean> {
  try {
    await writeFile(path, compactResult(result, masker));
    return true;
  } catch {
    return false;
  }
}
