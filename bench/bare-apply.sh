#!/usr/bin/env bash
# The terraform commands `captf-runner apply` runs, run bare: the baseline of bench/run.mjs.
# Same workdir layout as the runner (a fresh copy of the module, the injected inputs-hash resource,
# a local backend override, the variable file outside the module), same arguments, same order:
#   version -json & version, init, validate, state pull, plan -detailed-exitcode -out, show -json,
#   and when the plan has changes: apply, output -json, state pull.
#
#   bare-apply.sh TERRAFORM MODULE_DIR INJECTED_TF STATE_FILE TFVARS_JSON INPUTS_HASH
set -euo pipefail
tf=$1 module=$2 inject=$3 state=$4 tfvars=$5 hash=$6

work=$(mktemp -d "${TMPDIR:-/tmp}/captf-bare-XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/root private=$work/private
mkdir -m 0700 "$private"
cp -r "$module" "$root"
cp "$inject" "$root/captf_runner_inputs_hash.tf"
printf 'terraform {\n  backend "local" {\n    path = "%s"\n  }\n}\n' "$state" >"$root/captf_runner_backend_override.tf"
cp "$tfvars" "$private/terraform.tfvars.json"
cd "$root"

export TF_IN_AUTOMATION=1 TF_INPUT=0 CHECKPOINT_DISABLE=1

"$tf" version -json >/dev/null &
v1=$!
"$tf" version >/dev/null &
v2=$!
wait "$v1"
wait "$v2"
"$tf" init -input=false -no-color -lockfile=readonly >/dev/null
"$tf" validate -json -no-color >/dev/null
"$tf" state pull -no-color >"$private/state-before.json"
rc=0
"$tf" plan -input=false -no-color -detailed-exitcode -out="$private/plan.tfplan" \
  -var-file="$private/terraform.tfvars.json" -var "captf_inputs_hash=$hash" >/dev/null || rc=$?
if [ "$rc" -ne 0 ] && [ "$rc" -ne 2 ]; then exit "$rc"; fi
"$tf" show -json -no-color "$private/plan.tfplan" >/dev/null
if [ "$rc" -eq 2 ]; then
  "$tf" apply -input=false -no-color "$private/plan.tfplan" >/dev/null
  "$tf" output -json -no-color >/dev/null
  "$tf" state pull -no-color >"$private/state-after.json"
fi
