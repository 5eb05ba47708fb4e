#!/bin/sh
# The runner's startup snapshot blob, made from its bundle (scripts/build-snapshot.mjs) by one node
# binary: it runs only on that one (node refuses another's, exit 14). The build makes one for the tests
# with its own node (scripts/snapshot-blob.mjs), the image build one with the image's node (Dockerfile,
# stage app), the bench one with the node it measures.
#
# The same node makes the same bytes from the same bundle (BENCHMARKS.md, the reproducibility row):
# `--predictable` fixes V8's hash seed and random numbers while it builds (a run rehashes with a seed
# of its own and needs no flag), the environment is fixed, and pino's clock, pid and host name are read
# at their first use (scripts/build-snapshot.mjs). node also keeps its builder's PID in the blob, so
# the builder is PID 1 of a PID namespace of its own where this may create one (root outside a
# container); else it is the next process of this shell, the same PID in every build that runs this
# in a PID namespace of its own after the same commands (a Docker RUN step, buildah --isolation oci),
# and another in a build that shares the host's (buildah --isolation chroot).
#
#   sh scripts/snapshot-blob.sh NODE ENTRY.cjs BLOB
set -eu
[ $# = 3 ] || { echo "usage: sh scripts/snapshot-blob.sh NODE ENTRY.cjs BLOB" >&2; exit 2; }
node=$1 entry=$2 blob=$3
# --no-warnings: node warns of every built-in module it has not verified in a snapshot (child_process, tty, …).
set -- --predictable --no-warnings --snapshot-blob "$blob" --build-snapshot "$entry"
if unshare --pid --fork true 2>/dev/null; then
  exec env -i PATH=/usr/local/bin:/usr/bin:/bin TZ=UTC LC_ALL=C unshare --pid --fork "$node" "$@"
fi
exec env -i PATH=/usr/local/bin:/usr/bin:/bin TZ=UTC LC_ALL=C "$node" "$@"
