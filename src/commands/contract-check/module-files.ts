// What the contract requires of a module's files. The module's configuration is read by the
// workspace scanner (src/workspace/scan.ts), the same one every op uses; what init's output says
// about providers, by the driver (src/terraform/diagnostics.ts).
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
