// What the contract requires of a module's files, and what init's output says about providers.
// The module's configuration is read by the workspace scanners (src/workspace/scan.ts), the same
// one every op uses.
import type { ObjectKind } from '../../object-kind.ts';

/**
 * Variables a module must declare per kind, because the controller always sets them:
 * - machine: `bootstrap_data` (every Cluster API machine boots from its bootstrap data);
 * - pool: `bootstrap_data` and `captf_cluster_outputs` (the cluster's exports its machines join);
 * - cluster: none (a cluster module is the source of the exports).
 */
export const REQUIRED_VARIABLES: Readonly<Record<ObjectKind, readonly string[]>> = {
  cluster: [],
  machine: ['bootstrap_data'],
  pool: ['bootstrap_data', 'captf_cluster_outputs'],
};

/**
 * The providers init looked for, from its progress lines ("- Finding latest version of
 * hashicorp/null...", "- Finding hashicorp/null versions matching "~> 3.0"..."). Built-in
 * providers are never looked for. Read from init because `terraform providers` needs an
 * initialized backend, which a contract check never has.
 */
export function providersInInitOutput(lines: readonly string[]): string[] {
  const found = lines.map((line) => /^- Finding (?:latest version of )?(\S+?)(?:\.\.\.| versions matching)/.exec(line.trim())?.[1]);
  return [...new Set(found.filter((p): p is string => p !== undefined))].sort();
}
