#!/bin/sh
# The runner's startup snapshot blob, made from its bundle (scripts/build/build-snapshot.mjs) by one node
# binary: it runs only on that one (node refuses another's, exit 14). The build makes one for the tests
# with its own node (scripts/image/snapshot-blob.mjs), the image build one with the image's node (Dockerfile,
# stage app), the bench one with the node it measures.
#
# The same node makes the same bytes from the same bundle, whatever runs this (BENCHMARKS.md, the
# reproducibility row): `--predictable` fixes V8's hash seed and random numbers while it builds (a run
# rehashes with a seed of its own and needs no flag); the environment is fixed, and so are node's stdio
# (node keeps what it made of the stderr it was given: a pipe, a file and a terminal make three blobs):
# no input, its output in a file beside the blob, shown when it is done. What the bundle reads of the process as it
# loads is read at its first use (scripts/build/build-snapshot.mjs), and node's PID is saved as a constant
# (src/startup-snapshot.ts).
#
#   sh scripts/image/snapshot-blob.sh NODE ENTRY.cjs BLOB
set -eu
[ $# = 3 ] || { echo "usage: sh scripts/image/snapshot-blob.sh NODE ENTRY.cjs BLOB" >&2; exit 2; }
node=$1 entry=$2 blob=$3
output=$blob.out
status=0
# --no-warnings: node warns of every built-in module it has not verified in a snapshot (child_process, tty, …).
# --single-threaded --max-semi-space-size=8: the V8 flags the runs take (runner/captf-runner.sh says why);
# Node 20 refuses a blob built under other V8 flags than its run's.
env -i PATH=/usr/local/bin:/usr/bin:/bin TZ=UTC LC_ALL=C \
  "$node" --predictable --single-threaded --max-semi-space-size=8 --no-warnings --snapshot-blob "$blob" --build-snapshot "$entry" </dev/null >"$output" 2>&1 || status=$?
cat "$output" >&2
rm -f "$output"
exit "$status"
