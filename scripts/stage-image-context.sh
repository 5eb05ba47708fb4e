#!/usr/bin/env bash
# Puts in place what the Dockerfile copies, so the image build itself needs no network:
#   dist/captf-runner.mjs   bundled here on the host (npm ci + esbuild)
#   dist/terraform          a copy of TERRAFORM_BIN (default: the terraform on PATH)
# Prints the terraform version on stdout: pass it as --build-arg TERRAFORM_VERSION.
#
# Release builds download terraform instead and verify it first (contract/sections/image.md):
#   TERRAFORM_BIN=/path/to/verified/terraform scripts/stage-image-context.sh
set -euo pipefail
cd "$(dirname "$0")/.."

terraform_bin=${TERRAFORM_BIN:-$(command -v terraform || true)}
if [ -z "$terraform_bin" ] || [ ! -x "$terraform_bin" ]; then
  echo "stage-image-context: no terraform binary: install terraform or set TERRAFORM_BIN=PATH" >&2
  exit 1
fi

[ -d node_modules ] || npm ci --no-audit --no-fund >&2
node scripts/build.mjs >&2

mkdir -p dist
# cp to a temp name then mv: a rebuild never copies over a binary a running container may use.
cp "$terraform_bin" dist/terraform.tmp
mv -f dist/terraform.tmp dist/terraform
chmod 0755 dist/terraform

CHECKPOINT_DISABLE=1 TF_CLI_CONFIG_FILE=/dev/null dist/terraform version -json \
  | node -e 'let s="";process.stdin.on("data",(d)=>(s+=d)).on("end",()=>console.log(JSON.parse(s).terraform_version))'
