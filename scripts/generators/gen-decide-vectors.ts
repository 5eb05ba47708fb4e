// Writes contract/vectors/decide-op.json (and job-image.json, below): every DecideOp case of test/controller-model/decide.cases.ts as
// snapshot -> decision, for a controller in another language to replay. The vectors are the model's
// own table tests, so they only change with them; test/controller-model/vectors.test.ts fails when the
// checked-in file is stale.
//
//   node --import tsx scripts/generators/gen-decide-vectors.ts
import { writeFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { fileURLToPath } from 'node:url';
import { decideOp } from '../../src/controller-model/decide-op.ts';
import { parseSnapshot } from '../../src/controller-model/snapshot.ts';
import { DECIDE_CASES } from '../../test/controller-model/decide.cases.ts';
import { jobImage } from '../../src/controller-model/op-shape.ts';
import { JOB_IMAGE_CASES } from '../../test/controller-model/job-image.cases.ts';
import { vectorsFile } from './vectors-file.ts';

const SCRIPT = 'scripts/generators/gen-decide-vectors.ts';

export const DECIDE_VECTORS_PATH = fileURLToPath(new URL('../../contract/vectors/decide-op.json', import.meta.url));
export const JOB_IMAGE_VECTORS_PATH = fileURLToPath(new URL('../../contract/vectors/job-image.json', import.meta.url));

/** The file's text. Refuses to export a case on which the model and the hand-written decision disagree. */
export function renderDecideVectors(): string {
  const vectors = DECIDE_CASES.map(({ name, doc, snapshot, decision }) => {
    const modelDecision = decideOp(parseSnapshot(snapshot));
    if (!isDeepStrictEqual(modelDecision, decision)) {
      throw new Error(
        `case "${name}": the model decides ${JSON.stringify(modelDecision)}, the case expects ${JSON.stringify(decision)}`,
      );
    }
    return { name, doc, snapshot, decision };
  });
  return vectorsFile(
    'DecideOp vectors: for each snapshot, the decision the controller must reach. Schema, reasons, jitter and backoff: contract/sections/decide-op.md.',
    SCRIPT,
    vectors,
  );
}

/** contract/vectors/job-image.json: which image a Job runs and which --image it is given. */
export function renderJobImageVectors(): string {
  for (const c of JOB_IMAGE_CASES) {
    const model = jobImage(c.image, c.images);
    if (!isDeepStrictEqual(model, c.expected))
      throw new Error(
        `case "${c.name}": the model says ${JSON.stringify(model)}, the case ${JSON.stringify(c.expected)}`,
      );
  }
  return vectorsFile(
    "Which image a Job runs (container) and which --image it is given (imageFlag, part of the inputs hash), from the decision's image (spec or pinned) and what the controller knows of the object's image. Rule: contract/sections/decide-op.md, The image.",
    SCRIPT,
    JOB_IMAGE_CASES,
  );
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(JOB_IMAGE_VECTORS_PATH, renderJobImageVectors());
  writeFileSync(DECIDE_VECTORS_PATH, renderDecideVectors());
  console.log(`wrote ${DECIDE_CASES.length} vectors to ${DECIDE_VECTORS_PATH}`);
}
