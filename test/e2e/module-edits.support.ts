// Variants of the catalogue's modules (test/support/tf-modules.ts) made by swapping text in their
// main.tf: several changes of the catalogue in one plan, or one sized differently.
import assert from 'node:assert/strict';
import type { FileTree } from '../support/tf-modules.ts';

/** `tree` with each [from, to] swapped in its main.tf, in order (each swap must happen). */
export function edited(tree: FileTree, ...swaps: (readonly [from: string, to: string])[]): FileTree {
  let main = tree['main.tf']!;
  for (const [from, to] of swaps) {
    assert.ok(main.includes(from), `main.tf holds ${JSON.stringify(from)}`);
    main = main.replace(from, to);
  }
  return { ...tree, 'main.tf': main };
}

/** The base module's terraform_data.network, as its main.tf holds it. */
export const NETWORK_BLOCK = 'resource "terraform_data" "network" {\n  input = "10.0.0.0/16"\n}\n';
