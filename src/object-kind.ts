// The three kinds of CAPTF object a run serves, and what each is called where the runner names it.
// Without zod: the command line offers the kinds before any op (and zod) loads.

export const OBJECT_KINDS = ['cluster', 'machine', 'pool'] as const;
export type ObjectKind = (typeof OBJECT_KINDS)[number];

/** The Kubernetes resource of each kind, as kubectl names it. */
export const KIND_RESOURCE: Readonly<Record<ObjectKind, string>> = {
  cluster: 'terraformcluster',
  machine: 'terraformmachine',
  pool: 'terraformmachinepool',
};

/** The kinds' short names, as in the names of the Secrets of an object: captf-inputs-<kindshort>-<name>, captf-backup-<kindshort>.<namespace>.<name>-… */
export const KIND_SHORT: Readonly<Record<ObjectKind, string>> = { cluster: 'tc', machine: 'tm', pool: 'tmp' };
