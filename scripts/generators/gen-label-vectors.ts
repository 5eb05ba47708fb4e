// Writes contract/vectors/label-values.json: the label values of test/util/label-values.cases.ts,
// which labelValueFor must give, for a controller in another language to replay.
// test/util/label-vectors.test.ts fails when the checked-in file is stale.
//
//   node --import tsx scripts/generators/gen-label-vectors.ts
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { labelValueFor } from '../../src/util/kube-names.ts';
import { LABEL_VALUE_CASES } from '../../test/util/label-values.cases.ts';
import { vectorsFile } from './vectors-file.ts';

export const LABEL_VECTORS_PATH = fileURLToPath(new URL('../../contract/vectors/label-values.json', import.meta.url));

/** The file's text. Refuses to export a case the runner does not meet. */
export function renderLabelVectors(): string {
  for (const c of LABEL_VALUE_CASES) {
    const made = labelValueFor(c.value);
    if (made !== c.expected)
      throw new Error(`case "${c.name}": the runner makes ${made}, the case expects ${c.expected}`);
  }
  return vectorsFile(
    'Label values of result Secrets (captf.io/approval-hash, captf.io/job-name, captf.io/object-name): the value itself when it is a valid label value (at most 63 characters of [-A-Za-z0-9_.], beginning and ending with a letter or digit); else its first 52 characters with every other character as "-", leading and trailing characters other than letters and digits dropped, then "-" and the first 10 hex digits of the sha256 of the whole value (UTF-8); only the digest when no head is left. The full value is in the annotation of the same key. Rule: contract/sections/kubernetes.md, The result Secret.',
    'scripts/generators/gen-label-vectors.ts',
    LABEL_VALUE_CASES,
  );
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(LABEL_VECTORS_PATH, renderLabelVectors());
  console.log(`wrote ${LABEL_VALUE_CASES.length} vectors to ${LABEL_VECTORS_PATH}`);
}
