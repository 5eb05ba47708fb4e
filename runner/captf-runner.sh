#!/bin/sh
# The runner's command in the image (/usr/local/bin/captf-runner). node restores the runner's heap from
# the startup snapshot the image build made with this node (contract/sections/image.md, "The start"):
# the same bundle, the same command line, its start already done. Without the blob, or under
# NODE_OPTIONS (V8 flags the blob was not built with: Node 20 refuses such a run, Node 24 takes it, and
# neither is what the image tests), the bundle starts as any script does (under the same V8 flag, below). A blob made by another node is refused by node: exit 14, and it says so.
lib=/usr/local/lib/captf-runner
# The node the blob was made by, by path: the blob is no use to another, and PATH is the caller's.
node=/usr/local/bin/node
# V8 compiles and collects garbage on the runner's own thread, with no background threads: a run is one
# short process, and those threads cost more CPU than they take off it (node's own CPU ×0.77 in a
# no-change apply of 500 instances, less in long plans too: BENCHMARKS.md, issue 33). Its young
# generation's semi-spaces stay at 8 MiB: Node 24 grows them to 64 MiB (Node 20 to 16), and a stream of terraform's
# lines (each a string until it is collected) then took the runner past 150 MB (BENCHMARKS.md, note 7).
# The blob is built under the same flags (scripts/image/snapshot-blob.sh): Node 20 refuses a blob under
# other V8 flags.
v8="--single-threaded --max-semi-space-size=8"
if [ -z "${NODE_OPTIONS:-}" ] && [ -r "$lib/snapshot/captf-runner.blob" ]; then
  # glibc asks for huge pages for node's large allocations (the blob is read whole): fewer page faults
  # where the kernel grants them on request (transparent_hugepage "madvise" or "always").
  export GLIBC_TUNABLES="${GLIBC_TUNABLES:-glibc.malloc.hugetlb=1}"
  exec "$node" $v8 --snapshot-blob "$lib/snapshot/captf-runner.blob" "$lib/captf-runner.mjs" "$@"
fi
exec "$node" $v8 "$lib/captf-runner.mjs" "$@"
