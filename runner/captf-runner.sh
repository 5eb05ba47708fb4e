#!/bin/sh
# The runner's command in the image (/usr/local/bin/captf-runner). node restores the runner's heap from
# the startup snapshot the image build made with this node (contract/sections/image.md, "The start"):
# the same bundle, the same command line, its start already done. Without the blob, or under
# NODE_OPTIONS (V8 flags the blob was not built with: Node 20 refuses such a run, Node 24 takes it, and
# neither is what the image tests), the bundle starts as any script does. A blob made by another node is refused by node: exit 14, and it says so.
lib=/usr/local/lib/captf-runner
# The node the blob was made by, by path: the blob is no use to another, and PATH is the caller's.
node=/usr/local/bin/node
if [ -z "${NODE_OPTIONS:-}" ] && [ -r "$lib/snapshot/captf-runner.blob" ]; then
  # glibc asks for huge pages for node's large allocations (the blob is read whole): fewer page faults
  # where the kernel grants them on request (transparent_hugepage "madvise" or "always").
  export GLIBC_TUNABLES="${GLIBC_TUNABLES:-glibc.malloc.hugetlb=1}"
  exec "$node" --snapshot-blob "$lib/snapshot/captf-runner.blob" "$lib/captf-runner.mjs" "$@"
fi
exec "$node" "$lib/captf-runner.mjs" "$@"
