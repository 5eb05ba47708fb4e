#!/bin/sh
# A `terraform` that is the real terraform (1.11 here) with the plan documents of a newer one:
# every command goes to the real binary, and only what the environment asks for changes. Newer
# terraform and OpenTofu cannot be installed on these machines; this is how the runner meets their
# plan shapes end to end, with real state. Test-only.
#
# A shell script, because the runner starts terraform about seven times a run and a node process
# costs ~0.1 s of CPU to start: only the two commands whose output is edited (newer-terraform.mjs)
# start one.
#
# Environment
#   NEWER_TF_REAL        the real terraform (default: `terraform` on PATH)
#   NEWER_TF_LOG         append one JSON line per command: {"argv": [...]} (before it runs)
#   NEWER_TF_SHOW_ADD    a file holding a JSON object: `show -json PLANFILE` prints the real plan
#                        document with these top-level keys added (replacing any the real one has)
#   NEWER_TF_PLAN_EXIT   `plan -detailed-exitcode` exits with this code (0 or 2) whenever the real
#                        plan succeeded (exit 0 or 2); a failed plan keeps its code
#   NEWER_TF_VERSION     the version `version` and `version -json` report
real=${NEWER_TF_REAL:-terraform}
here=$(dirname "$0")

command=
for arg in "$@"; do
  case $arg in -*) ;; *) command=$arg; break ;; esac
done
has() {
  wanted=$1
  shift
  for arg in "$@"; do [ "$arg" = "$wanted" ] && return 0; done
  return 1
}
last=
for last in "$@"; do :; done

if [ -n "$NEWER_TF_LOG" ]; then
  # Arguments of only these characters are JSON strings as they are; any other goes to JSON.stringify.
  json=
  for arg in "$@"; do
    case $arg in
      *[!A-Za-z0-9_./=:,+@%~-]*) json=; break ;;
      *) json="$json${json:+,}\"$arg\"" ;;
    esac
  done
  if [ $# -eq 0 ] || [ -n "$json" ]; then
    printf '{"argv":[%s]}\n' "$json" >>"$NEWER_TF_LOG"
  else
    node -e 'require("node:fs").appendFileSync(process.env.NEWER_TF_LOG, JSON.stringify({ argv: process.argv.slice(1) }) + "\n")' -- "$@"
  fi
fi

if [ -n "$NEWER_TF_SHOW_ADD" ] && [ "$command" = show ] && has -json "$@" && [ "$last" != show ] && case $last in -*) false ;; *) true ;; esac; then
  exec node "$here/newer-terraform.mjs" show-add "$real" "$@"
fi
if [ -n "$NEWER_TF_VERSION" ] && { [ "$command" = version ] || has -version "$@" || has --version "$@"; }; then
  exec node "$here/newer-terraform.mjs" version "$real" "$@"
fi
if [ -n "$NEWER_TF_PLAN_EXIT" ] && [ "$command" = plan ] && has -detailed-exitcode "$@"; then
  "$real" "$@"
  status=$?
  case $status in 0 | 2) status=$NEWER_TF_PLAN_EXIT ;; esac
  exit "$status"
fi
exec "$real" "$@"
