#!/usr/bin/env bash
# Puts in place what the Dockerfile copies, so that the image build needs no network but apt's:
#   dist/captf-runner.mjs, dist/chunks/   bundled here (npm ci --ignore-scripts, then esbuild's JS API)
#   dist/snapshot/captf-runner.cjs, lib/  the startup snapshot's bundle and the packages it leaves out; the
#                                         image build makes the blob with the image's node (the blob this
#                                         machine's node made beside them stays out of the context)
#   dist/terraform                        a copy of TERRAFORM_BIN (default: the terraform on PATH);
#                                         the build refuses it unless runner/terraform.sha256sums holds its sha256
#   dist/npm-sbom.cdx.json                the bundle's packages: `npm sbom --package-lock-only` less the
#                                         lock file's dev packages (scripts/image/npm-sbom.mjs)
# Prints the build arguments, one KEY=VALUE a line: TERRAFORM_VERSION, RUNNER_VERSION, REVISION,
# CREATED (the commit's time, RFC 3339) and SOURCE_DATE_EPOCH (the same, in seconds: buildah's
# --timestamp, BuildKit's SOURCE_DATE_EPOCH), so that the same tree builds the same image.
#
# Release builds take terraform from HashiCorp's releases (scripts/image/pin-terraform.sh verifies it):
#   TERRAFORM_BIN=/path/to/verified/terraform scripts/image/stage-image-context.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

terraform_bin=${TERRAFORM_BIN:-$(command -v terraform || true)}
if [ -z "$terraform_bin" ] || [ ! -x "$terraform_bin" ]; then
  echo "stage-image-context: no terraform binary: install terraform or set TERRAFORM_BIN=PATH" >&2
  exit 1
fi

# No dependency's install script runs: the bundle is built with esbuild's JS API, which needs none.
[ -d node_modules ] || npm ci --ignore-scripts --no-audit --no-fund >&2
node scripts/build/build.mjs >&2
npm sbom --package-lock-only --sbom-format cyclonedx | node scripts/image/npm-sbom.mjs >dist/npm-sbom.cdx.json.tmp
mv -f dist/npm-sbom.cdx.json.tmp dist/npm-sbom.cdx.json

# cp to a temp name then mv: a rebuild never copies over a binary a running container may use.
cp "$terraform_bin" dist/terraform.tmp
mv -f dist/terraform.tmp dist/terraform
chmod 0755 dist/terraform

tf_version=$(CHECKPOINT_DISABLE=1 TF_CLI_CONFIG_FILE=/dev/null dist/terraform version -json \
  | node -e 'let s="";process.stdin.on("data",(d)=>(s+=d)).on("end",()=>console.log(JSON.parse(s).terraform_version))')
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || true)}
if [ -z "$epoch" ]; then
  echo "stage-image-context: no commit to date the image from: build from a git checkout or set SOURCE_DATE_EPOCH" >&2
  exit 1
fi
echo "TERRAFORM_VERSION=$tf_version"
echo "RUNNER_VERSION=$(node -p 'require("./package.json").version')"
echo "REVISION=$(git rev-parse HEAD 2>/dev/null || echo unknown)"
echo "CREATED=$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)"
echo "SOURCE_DATE_EPOCH=$epoch"
