// Writes contract/vectors/decide-op.json: every DecideOp case of test/controller-model/decide-cases.ts as
// snapshot -> decision, for a controller in another language to replay. The vectors are the model's
// own table tests, so they only change with them; test/controller-model/vectors.test.ts fails when the
// checked-in file is stale.
//
//   node --import tsx scripts/gen-decide-vectors.ts
import { writeFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { fileURLToPath } from 'node:url';
import { decideOp } from '../src/controller-model/decide-op.ts';
import { parseSnapshot } from '../src/controller-model/snapshot.ts';
import { DECIDE_CASES } from '../test/controller-model/decide-cases.ts';

export const DECIDE_VECTORS_PATH = fileURLToPath(new URL('../contract/vectors/decide-op.json', import.meta.url));

/** The file's text. Refuses to export a case on which the model and the hand-written decision disagree. */
export function renderDecideVectors(): string {
  const vectors = DECIDE_CASES.map(({ name, doc, snapshot, decision }) => {
    const modelDecision = decideOp(parseSnapshot(snapshot));
    if (!isDeepStrictEqual(modelDecision, decision)) {
      throw new Error(`case "${name}": the model decides ${JSON.stringify(modelDecision)}, the case expects ${JSON.stringify(decision)}`);
    }
    return { name, doc, snapshot, decision };
  });
  const file = {
    description:
      'DecideOp vectors: for each snapshot, the decision the controller must reach. Schema, reasons, jitter and backoff: contract/sections/decide-op.md.',
    generatedBy: 'node --import tsx scripts/gen-decide-vectors.ts (do not edit by hand)',
    vectors,
  };
  return `${JSON.stringify(file, null, 2)}\n`;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(DECIDE_VECTORS_PATH, renderDecideVectors());
  console.log(`wrote ${DECIDE_CASES.length} vectors to ${DECIDE_VECTORS_PATH}`);
}
