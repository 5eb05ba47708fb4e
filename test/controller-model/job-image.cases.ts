// Which image a Job runs and which `--image` it is given (controller-model/op-shape.ts, jobImage):
// table tests that scripts/generators/gen-decide-vectors.ts exports as contract/vectors/job-image.json.
import type { JobImage, ObjectImages } from '../../src/controller-model/op-shape.ts';
import type { OpDecision } from '../../src/controller-model/decision.ts';

export interface JobImageCase {
  name: string;
  doc: string;
  /** The decision's `image`, and the op it is for (for the reader: the rule reads only `image`). */
  op: OpDecision['op'];
  image: OpDecision['image'];
  images: ObjectImages;
  expected: JobImage;
}

const DIGEST = `sha256:${'0123456789abcdef'.repeat(4)}`;
const V1 = 'registry.example.com/captf/aws-cluster:v1.4.2';
const V2 = 'registry.example.com/captf/aws-cluster:v1.5.0';
const PINNED = `registry.example.com/captf/aws-cluster@${DIGEST}`;

export const JOB_IMAGE_CASES: JobImageCase[] = [
  {
    name: 'apply runs and passes the spec reference',
    doc: 'Only apply and plan run the spec’s image as written',
    op: 'apply',
    image: 'spec',
    images: { spec: V2, applied: V1, pinnedDigest: DIGEST },
    expected: { container: V2, imageFlag: V2 },
  },
  {
    name: 'plan runs and passes the spec reference',
    doc: 'Only apply and plan run the spec’s image as written',
    op: 'plan',
    image: 'spec',
    images: { spec: V1, applied: V1, pinnedDigest: DIGEST },
    expected: { container: V1, imageFlag: V1 },
  },
  {
    name: 'refresh runs the pinned digest and passes the applied reference: its inputs hash is the one the apply recorded',
    doc: 'Every other op runs the digest pinned after the last successful apply',
    op: 'refresh',
    image: 'pinned',
    images: { spec: V1, applied: V1, pinnedDigest: DIGEST },
    expected: { container: PINNED, imageFlag: V1 },
  },
  {
    name: 'drift likewise',
    doc: 'Every other op runs the digest pinned after the last successful apply',
    op: 'drift',
    image: 'pinned',
    images: { spec: V1, applied: V1, pinnedDigest: DIGEST },
    expected: { container: PINNED, imageFlag: V1 },
  },
  {
    name: 'a destroy while a new spec image waits: the applied reference, not the spec',
    doc: 'the destroy runs the image and the identity recorded in the durable Secret, not the current spec',
    op: 'destroy',
    image: 'pinned',
    images: { spec: V2, applied: V1, pinnedDigest: DIGEST },
    expected: { container: PINNED, imageFlag: V1 },
  },
  {
    name: 'restore runs the pinned digest too',
    doc: 'Every other op runs the digest pinned after the last successful apply',
    op: 'restore',
    image: 'pinned',
    images: { spec: V1, applied: V1, pinnedDigest: DIGEST },
    expected: { container: PINNED, imageFlag: V1 },
  },
  {
    name: 'no digest pinned: the spec reference, run and passed',
    doc: 'without one it falls back to the spec reference and emits DigestUnknown',
    op: 'drift',
    image: 'spec',
    images: { spec: V1 },
    expected: { container: V1, imageFlag: V1 },
  },
  {
    name: 'a digest pinned but the applied reference lost (the durable Secret gone): the spec reference, and DigestUnknown, never silently',
    doc: 'without one it falls back to the spec reference and emits DigestUnknown',
    op: 'destroy',
    image: 'pinned',
    images: { spec: V2, pinnedDigest: DIGEST },
    expected: { container: V2, imageFlag: V2, events: ['DigestUnknown'] },
  },
  {
    name: 'a registry with a port: the repository keeps it',
    doc: 'the pinned image is the repository of the applied reference and @ the digest',
    op: 'refresh',
    image: 'pinned',
    images: {
      spec: 'registry.example.com:5000/team/module:v2',
      applied: 'registry.example.com:5000/team/module:v2',
      pinnedDigest: DIGEST,
    },
    expected: {
      container: `registry.example.com:5000/team/module@${DIGEST}`,
      imageFlag: 'registry.example.com:5000/team/module:v2',
    },
  },
  {
    name: 'a spec pinned by digest already: the same reference',
    doc: 'the pinned image is the repository of the applied reference and @ the digest',
    op: 'drift',
    image: 'pinned',
    images: { spec: PINNED, applied: PINNED, pinnedDigest: DIGEST },
    expected: { container: PINNED, imageFlag: PINNED },
  },
  {
    name: 'a tag and a digest in the spec: --image keeps both, as written',
    doc: '--image is the reference the last successful apply ran, as written',
    op: 'refresh',
    image: 'pinned',
    images: { spec: `${V1}@${DIGEST}`, applied: `${V1}@${DIGEST}`, pinnedDigest: DIGEST },
    expected: { container: PINNED, imageFlag: `${V1}@${DIGEST}` },
  },
];
