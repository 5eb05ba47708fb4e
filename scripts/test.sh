#!/usr/bin/env bash
# The test suite: scripts/test.sh [all|unit|e2e] [FILE...]   (npm test, npm run test:unit, npm run test:e2e)
#   unit  every test/**/*.test.ts outside the e2e group: pure code, seconds, no terraform, no PostgreSQL, no
#         process started. A stand-in `terraform` (and PostgreSQL binaries) first on PATH fails any that starts one.
#         The files run in CAPTF_TEST_SHARDS processes (default 4, two at a time), each file a suite named by its
#         path, one after the other in its process; dealt and ordered by CAPTF_TEST_SEED (default: a new seed each
#         run, printed). A file that leaves its process changed fails by name (test/support/shard.ts).
#         CAPTF_TEST_TIMES=FILE writes each file's time to FILE as well (bench/test-times.mjs).
#   e2e   every test file under test/e2e/ or test/support/, and every *.e2e.test.ts elsewhere: the built runner,
#         the real terraform, PostgreSQL, radosgw, other processes. Builds the bundle first. Run once per binary in CAPTF_TEST_TERRAFORMS (space-separated
#         paths) when set, else with CAPTF_TEST_TERRAFORM (one path) or terraform on PATH.
#         Two phases: every file but the SERIAL ones concurrently (CAPTF_TEST_CONCURRENCY files at a time,
#         default 3: terraform runs wait on pipes and disk as much as on the CPUs), then the SERIAL ones,
#         one file at a time and one test at a time: nothing shares the machine with a test that times
#         signals, deadlines and hung steps.
#   all   (default) npm run check (type-check, lint, format check) beside unit, then e2e.
# Test files run as bundles of plain JS (scripts/build/build-tests.mjs), built first for the whole run: an
# e2e file in a process of its own, the unit files in shards.
# Files are found, not listed (node 20 does not expand globs for --test): a new test file cannot be forgotten,
# and a group that finds no file fails.
set -euo pipefail
cd "$(dirname "$0")/.."

# The tests reach nothing outside this machine (the fake API server's CA is passed explicitly): an extra
# CA bundle from the environment would only make every node process they start (test files, runner runs,
# the fake terraform) read and parse it first, ≈ 70 ms of CPU each.
unset NODE_EXTRA_CA_CERTS
# terraform's Go runtime collects its garbage less often (a heap may grow to 5 × what is live first): the
# test modules are tiny, and the collections were a third of each terraform launch's CPU (≈ 80 → 54 ms).
export GOGC=400

# Timing-sensitive e2e files (signals, deadlines, stop grace): the serial phase runs them one at a time, alone.
SERIAL=(
  test/e2e/faults-deadline.test.ts
  test/e2e/faults-signals.test.ts
  test/e2e/in-cluster-deadline.test.ts
  test/e2e/policy-signals.test.ts
  test/e2e/signals.test.ts
)

group="${1:-all}"
case "$group" in all | unit | e2e) shift || true ;; *) group=all ;; esac

mapfile -t every < <(find test -name '*.test.ts' -not -path '*/node_modules/*' | sort)
for f in "${SERIAL[@]}"; do
  [ -f "$f" ] || { echo "scripts/test.sh: SERIAL names $f, which does not exist" >&2; exit 1; }
done
# The e2e group: a folder rule and a suffix, nothing to list (test/README.md).
is_e2e() {
  case "$1" in test/e2e/* | test/support/* | *.e2e.test.ts) return 0 ;; esac
  return 1
}
unit=() e2e=()
for f in "${every[@]}"; do if is_e2e "$f"; then e2e+=("$f"); else unit+=("$f"); fi; done
if [ "$#" -gt 0 ]; then # named files: each in its own group
  unit=() e2e=()
  for f in "$@"; do if is_e2e "$f"; then e2e+=("$f"); else unit+=("$f"); fi; done
fi

# Each run bundles the test files it runs (scripts/build/build-tests.mjs) into a dir of its own and runs them
# as plain JS: a test process under tsx's loader hooks costs ≈ 0.7 s more CPU. The bundles keep each
# source file's import.meta and map stack traces to the .ts lines.
scratch=()
trap 'rm -rf "${scratch[@]}"' EXIT
mkdir -p node_modules/.cache
bundles="$(mktemp -d node_modules/.cache/captf-tests.XXXXXX)"
scratch+=("$bundles")
bundle_tests() {
  [ "$#" -gt 0 ] || return 0
  node scripts/build/build-tests.mjs "$bundles" "$@"
}
# The unit group runs in UNIT_SHARDS processes, not one a file: a test process costs CPU before its first test
# (node, its test runner, zod, the CEL library), and the group's files are many and small. Each shard runs a
# share of the files one after the other, each file a suite named by its path, the sources and packages loaded
# once (build-tests.mjs --shards, scripts/build/test-shards.mjs, test/support/shard.ts). The files share a
# process, so each leaves it as it found it: the files are dealt and ordered by a seed, a new one each run unless
# CAPTF_TEST_SEED names it, so every run tries another order, and the seed printed replays one.
UNIT_SHARDS="${CAPTF_TEST_SHARDS:-4}"
seed="${CAPTF_TEST_SEED:-$((RANDOM * 32768 + RANDOM))}"
shards=()
bundle_unit() {
  [ "${#unit[@]}" -gt 0 ] || return 0
  node scripts/build/build-tests.mjs "$bundles/unit" --shards "$UNIT_SHARDS" --seed "$seed" "${unit[@]}" >"$bundles/shards"
  mapfile -t shards <"$bundles/shards"
}
# The timeout bounds each file, so a hang is caught; never a slow file on a busy machine.
run_tests() {
  local args=() a
  for a in "$@"; do case "$a" in *.ts) args+=("$bundles/${a%.ts}.mjs") ;; *) args+=("$a") ;; esac; done
  node --enable-source-maps --test --test-reporter=spec --test-timeout=900000 "${args[@]}"
}

run_unit() {
  [ "${#unit[@]}" -gt 0 ] || { [ "$#" -gt 0 ] && return 0; echo "no unit test files found under test/" >&2; exit 1; }
  stand_in="$(mktemp -d)"
  scratch+=("$stand_in")
  printf '#!/bin/sh\necho "unit tests start no $(basename "$0"): a test that needs it belongs in test/e2e/ or in a file named *.e2e.test.ts (test/README.md)" >&2\nexit 127\n' >"$stand_in/terraform"
  chmod +x "$stand_in/terraform"
  for name in tofu initdb pg_ctl postgres psql; do ln -s terraform "$stand_in/$name"; done
  # CAPTF_TEST_TIMES=FILE: each file's time written to FILE as well (bench/test-times.mjs).
  local times=()
  [ -z "${CAPTF_TEST_TIMES:-}" ] ||
    times=(--test-reporter-destination=stdout --test-reporter=./bench/test-times.mjs --test-reporter-destination="$CAPTF_TEST_TIMES")
  echo "unit group: ${#unit[@]} files in ${#shards[@]} processes, dealt and ordered by seed $seed (CAPTF_TEST_SEED=$seed replays it)"
  PATH="$stand_in:$PATH" CAPTF_PG_BIN_DIR="$stand_in" CAPTF_TEST_TERRAFORM="" run_tests --test-concurrency=2 "${times[@]}" "${shards[@]}"
}

is_serial() {
  local f
  for f in "${SERIAL[@]}"; do [ "$f" = "$1" ] && return 0; done
  return 1
}

# The e2e files of this run in two phases: the concurrent ones, then the timing-sensitive ones.
run_e2e_phases() {
  local concurrent=() serial=() f status=0
  for f in "${e2e[@]}"; do if is_serial "$f"; then serial+=("$f"); else concurrent+=("$f"); fi; done
  # A failure in the first phase still runs the second: one run reports every failing file.
  [ "${#concurrent[@]}" -eq 0 ] || run_tests --test-concurrency="${CAPTF_TEST_CONCURRENCY:-3}" "${concurrent[@]}" || status=1
  [ "${#serial[@]}" -eq 0 ] || run_tests --test-concurrency=1 "${serial[@]}" || status=1
  return "$status"
}

run_e2e() {
  [ "${#e2e[@]}" -gt 0 ] || { [ "$#" -gt 0 ] && return 0; echo "no e2e test files found under test/" >&2; exit 1; }
  node scripts/build/build.mjs
  if [ -n "${CAPTF_TEST_TERRAFORMS:-}" ]; then
    local tf
    for tf in $CAPTF_TEST_TERRAFORMS; do
      echo "== e2e with CAPTF_TEST_TERRAFORM=$tf"
      CAPTF_TEST_TERRAFORM="$tf" run_e2e_phases
    done
  else
    run_e2e_phases
  fi
}

case "$group" in unit) bundle_unit ;; e2e) bundle_tests "${e2e[@]}" ;; all) bundle_unit && bundle_tests "${e2e[@]}" ;; esac

case "$group" in
  unit) run_unit "$@" ;;
  e2e) run_e2e "$@" ;;
  all)
    # The gate (npm run check: type-check, lint, format check) runs beside the unit group, which leaves
    # part of the two CPUs idle.
    npm run --silent check &
    check=$!
    unit_status=0
    run_unit "$@" || unit_status=$?
    wait "$check" # a type error, a lint finding or an unformatted file ends the run here (set -e)
    [ "$unit_status" -eq 0 ] || exit "$unit_status"
    run_e2e "$@"
    ;;
esac
