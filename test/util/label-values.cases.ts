// The label values the runner derives (src/util/kube-names.ts, labelValueFor): table tests that
// scripts/generators/gen-label-vectors.ts exports as contract/vectors/label-values.json, so a controller that
// selects result Secrets by label (captf.io/approval-hash, captf.io/job-name, captf.io/object-name)
// builds the same values. The expected values were computed apart from the runner (python's hashlib).

export interface LabelValueCase {
  name: string;
  /** The label it is, for the reader: the rule is the same for every label. */
  label: 'captf.io/approval-hash' | 'captf.io/job-name' | 'captf.io/object-name';
  value: string;
  expected: string;
}

export const LABEL_VALUE_CASES: LabelValueCase[] = [
  {
    name: 'an approval hash (64 hex digits) is its first 52, "-", and the first 10 hex digits of the sha256 of the 64 characters',
    label: 'captf.io/approval-hash',
    value: '9deb65b8788f41ff94a217842017db2f843954fc0eb46110835903908e5a265f',
    expected: '9deb65b8788f41ff94a217842017db2f843954fc0eb461108359-cb7faf486c',
  },
  {
    name: 'another approval hash: the digest is of the whole hash, so two hashes sharing 52 digits still differ',
    label: 'captf.io/approval-hash',
    value: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    expected: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495-cd372fb851',
  },
  {
    name: 'a valid label value is itself',
    label: 'captf.io/job-name',
    value: 'prod-cluster-apply-7f3c9',
    expected: 'prod-cluster-apply-7f3c9',
  },
  {
    name: 'a name past 63 characters: its first 52, trailing "-", "_" and "." dropped, "-" and the digest',
    label: 'captf.io/job-name',
    value: 'captf-prod-eu-west-1-cluster-apply-2026-12-01t23-35-39z-0123456789abcdef',
    expected: 'captf-prod-eu-west-1-cluster-apply-2026-12-01t23-35-dafd9f3ca6',
  },
  {
    name: 'characters a label value cannot hold become "-", and a value that is no label value gets the digest even when short',
    label: 'captf.io/object-name',
    value: 'ns/object name',
    expected: 'ns-object-name-065be27fd9',
  },
  {
    name: 'leading and trailing characters other than letters and digits are dropped from the head',
    label: 'captf.io/object-name',
    value: '-leading.dash_and.dot-',
    expected: 'leading.dash_and.dot-46510a558f',
  },
];
