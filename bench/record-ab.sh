#!/usr/bin/env bash
# A/B of the image's terraform record (issue 33; contract/sections/image.md, "The verified terraform"):
# no-change applies of a 500-instance module by the built runner with the record beside its entry (A:
# a copy of dist/, as in the image) and without it (B: dist/), interleaved (AB, BA, …), each side its
# own module and state. Prints the medians of the process tree's CPU (bench/rusage.py), the node
# process's own CPU (bench/self-usage.cjs) and wall time, and the medians of the pairs' ratios A ÷ B.
#
#   npm run build && bash bench/record-ab.sh [ROUNDS]      (default 8; terraform on PATH)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-8}
terraform=$(command -v terraform)
work=$(mktemp -d "${TMPDIR:-/tmp}/captf-record-ab-XXXXXX")
trap 'rm -rf "$work"' EXIT
unset NODE_EXTRA_CA_CERTS
export TF_CLI_CONFIG_FILE=/dev/null CHECKPOINT_DISABLE=1 TF_IN_AUTOMATION=1

mkdir -p "$work/lib"
cp -r "$repo/dist/captf-runner.mjs" "$repo/dist/chunks" "$work/lib/"
sh "$repo/runner/terraform-record.sh" "$terraform" "$terraform" > "$work/lib/terraform-verified.json"
declare -A entry=([A]="$work/lib/captf-runner.mjs" [B]="$repo/dist/captf-runner.mjs")
for side in A B; do
  mkdir -p "$work/$side/module" "$work/$side/inputs"
  printf 'resource "terraform_data" "r" {\n  count = 500\n  input = "x"\n}\n' > "$work/$side/module/main.tf"
  echo '{}' > "$work/$side/inputs/terraform.tfvars.json"
done

run() {
  local d="$work/$1"
  BENCH_SELF_USAGE_FILE="$work/$1.self" python3 "$repo/bench/rusage.py" "$work/$1.one" node --require "$repo/bench/self-usage.cjs" "${entry[$1]}" \
    apply --kind cluster --module "$d/module" --inputs "$d/inputs" --state "$d/state.tfstate" --new-state --out "$d/out" \
    --termination-log "$d/termination-log" --log-format json --terraform "$terraform" --image bench >/dev/null 2>&1 \
    || { echo "the $1 run failed: $(head -c 600 "$d/out/result.json")" >&2; exit 1; }
  cat "$work/$1.one" >> "$work/$1.tree"
}
run A; run B                       # the first applies create the 500 instances: not counted
rm -f "$work"/{A,B}.{self,tree}
for i in $(seq 1 "$rounds"); do
  if (( i % 2 )); then run A; run B; else run B; run A; fi
done
python3 - "$work" <<'PY'
import json, statistics, sys
work = sys.argv[1]
def tree(side): return [line.split() for line in open(f'{work}/{side}.tree')]
def cpu(side): return [(int(t[2]) + int(t[3])) / 1000 for t in tree(side)]
def wall(side): return [int(t[1]) / 1000 for t in tree(side)]
def own(side): return [json.loads(line)['cpuMs'] for line in open(f'{work}/{side}.self')]
ratio = lambda a, b: statistics.median([x / y for x, y in zip(a, b)])
for side, what in (('A', 'with the record'), ('B', 'without')):
    print(f'{side} ({what}): tree CPU {statistics.median(cpu(side)):.0f} ms, node own CPU {statistics.median(own(side)):.0f} ms, wall {statistics.median(wall(side)):.0f} ms')
print(f'A ÷ B, median of {len(cpu("A"))} pairs: tree CPU ×{ratio(cpu("A"), cpu("B")):.3f}, node own CPU ×{ratio(own("A"), own("B")):.3f}, wall ×{ratio(wall("A"), wall("B")):.3f}')
PY
