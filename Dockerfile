# The captf-runner image: Node 24 LTS, the bundled runner (one file), terraform and tini.
#
# Build context = the repository root after scripts/stage-image-context.sh, which puts in place
#   dist/captf-runner.mjs   the esbuild bundle's entry (no node_modules at run time)
#   dist/chunks/            the chunks it imports on demand
#   dist/terraform          the terraform binary (release path: downloaded with a verified checksum)
# No RUN step uses the network except apt in the tini stage.
#
#   buildah build --build-arg TERRAFORM_VERSION=1.11.4 -t localhost/captf-runner:dev .
#
# contract/sections/image.md describes the layout, the environment and the module contract.

ARG NODE_IMAGE=node:24-bookworm-slim

# tini from Debian: only the static binary leaves this stage, so no apt lists reach the runtime.
FROM ${NODE_IMAGE} AS tini
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && /usr/bin/tini-static --version

FROM ${NODE_IMAGE}
# Ordered by how often each part changes, so a rebuild re-copies only the bundle.
COPY --from=tini /usr/bin/tini-static /usr/bin/tini
COPY --chmod=0755 dist/terraform /usr/local/bin/terraform
COPY --chmod=0644 runner/terraformrc /etc/captf-runner/terraformrc

# The binary's version must be the one the label names: a mismatch fails the build rather than
# shipping a wrong label. The runner user owns only /captf/work: with a read-only root filesystem
# every write goes to mounts (the workdir, /tmp), so HOME and TMPDIR point at /tmp.
ARG TERRAFORM_VERSION
RUN test -n "${TERRAFORM_VERSION}" \
 && terraform version -json | grep -q "\"terraform_version\": \"${TERRAFORM_VERSION}\"" \
 && groupadd --gid 10001 runner \
 && useradd --uid 10001 --gid 10001 --home-dir /tmp --no-create-home --shell /usr/sbin/nologin runner \
 && mkdir -p /captf/work /usr/share/terraform/plugins \
 && chown runner:runner /captf/work \
 && ln -s /usr/local/lib/captf-runner/captf-runner.mjs /usr/local/bin/captf-runner

COPY --chmod=0755 dist/captf-runner.mjs /usr/local/lib/captf-runner/captf-runner.mjs
# The chunks the entry imports on demand (esbuild code splitting), next to it in chunks/ (0755: the dir must be searchable).
COPY --chmod=0755 dist/chunks/ /usr/local/lib/captf-runner/chunks/

ENV TF_IN_AUTOMATION=1 \
    TF_CLI_CONFIG_FILE=/etc/captf-runner/terraformrc \
    CHECKPOINT_DISABLE=1 \
    HOME=/tmp \
    TMPDIR=/tmp \
    CAPTF_TERRAFORM=/usr/local/bin/terraform \
    NODE_COMPILE_CACHE=/usr/local/lib/captf-runner/compile-cache

# V8's compile cache, filled here so that no Job compiles the bundle again (start-up, issue 6): an
# apply and a plan of a throwaway module, as the runner user (node keys the cache by uid: a Job run
# as another uid works, without the cache). Owned by root afterwards: read-only at run time.
RUN install -d -o 10001 -g 10001 "$NODE_COMPILE_CACHE" \
 && runuser -u runner -- sh -ec ' \
      w=$(mktemp -d); mkdir "$w/module" "$w/inputs"; \
      echo "resource \"terraform_data\" \"warm\" {}" >"$w/module/main.tf"; \
      captf-runner --version >/dev/null; \
      set -- --module "$w/module" --inputs "$w/inputs" --state "$w/terraform.tfstate" --new-state --out "$w" --workdir "$w/work" --log-format json; \
      captf-runner apply "$@" >"$w/log" 2>&1 || { cat "$w/log"; exit 1; }; \
      captf-runner plan "$@" --artifacts "$w/artifacts" >"$w/log" 2>&1 || { cat "$w/log"; exit 1; }; \
      rm -rf "$w"' \
 && chown -R root:root "$NODE_COMPILE_CACHE" \
 && chmod -R a+rX,go-w "$NODE_COMPILE_CACHE" \
 && test "$(find "$NODE_COMPILE_CACHE" -type f | wc -l)" -ge 10

USER 10001:10001
WORKDIR /captf/work

# tini is PID 1: it reaps orphans (terraform's local-exec children) and forwards SIGTERM to the
# runner alone, which then stops terraform gracefully (one SIGINT) and writes an interrupted result.
ENTRYPOINT ["tini", "--", "captf-runner"]
CMD ["--help"]

ARG RUNNER_VERSION=0.0.0-dev
ARG SOURCE_URL=https://github.com/captf/captf-runner
ARG REVISION=unknown
LABEL org.opencontainers.image.title="captf-runner" \
      org.opencontainers.image.description="Runs terraform for a Cluster API provider: one Job, one op, one result" \
      org.opencontainers.image.version="${RUNNER_VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="${SOURCE_URL}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      io.captf.runner.contract="runner.captf.io/v1" \
      io.captf.runner.terraform-version="${TERRAFORM_VERSION}"
