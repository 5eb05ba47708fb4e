#!/usr/bin/env bash
# The baseline of bench/apply.ts and bench/breakdown.ts: the terraform steps a person runs by hand to apply a module, and
# nothing else (no version check, no state read, no output read). DIR is their checkout: the module,
# its variables in terraform.tfvars.json and its own state in terraform.tfstate (the local backend's
# default path). The plan is applied only when it has changes (exit code 2).
#
#   bare-apply.sh TERRAFORM DIR
set -euo pipefail
tf=$1
cd "$2"

"$tf" init -input=false >/dev/null
"$tf" validate >/dev/null
rc=0
"$tf" plan -input=false -detailed-exitcode -out=tfplan >/dev/null || rc=$?
if [ "$rc" -ne 0 ] && [ "$rc" -ne 2 ]; then exit "$rc"; fi
"$tf" show -json tfplan >/dev/null
if [ "$rc" -eq 2 ]; then
  "$tf" apply -input=false tfplan >/dev/null
fi
