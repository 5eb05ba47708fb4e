# The captf-runner image: only what a Job runs. Node 24, the bundled runner, terraform (verified
# against a committed sha256 before anything else is built), tini, CA certificates and a static
# busybox for the /bin/sh of terraform's local-exec; no package manager, no npm, no setuid file.
# contract/sections/image.md states each property and how to check it on a pulled image.
#
# Build context = the repository root after scripts/image/stage-image-context.sh, which puts in place
#   dist/captf-runner.mjs, dist/chunks/   the esbuild bundle (no node_modules at run time)
#   dist/snapshot/captf-runner.cjs, lib/  the startup snapshot's bundle and the packages it leaves out
#   dist/terraform                        the terraform binary to verify (runner/terraform.sha256sums)
#   dist/npm-sbom.cdx.json                the bundle's packages (scripts/image/npm-sbom.mjs)
# and prints the build arguments (TERRAFORM_VERSION, CREATED, REVISION, RUNNER_VERSION). Reproducible:
# build with `--timestamp <the commit's time>` (buildah) or SOURCE_DATE_EPOCH (BuildKit), and the same
# tree gives the same image ID.

# The base, pinned by digest: it gives the node binary and the tools of the build stages, nothing
# else reaches the image from it. CI passes its local stand-in (scripts/image/image-check.sh).
ARG BASE_NAME=docker.io/library/node:24-bookworm-slim
ARG BASE_DIGEST=sha256:6f7b03f7c2c8e2e784dcf9295400527b9b1270fd37b7e9a7285cf83b6951452d

# 1. terraform, verified first: a binary whose sha256 is not the one committed for its version and
# architecture fails the build here, before any other stage, and no image carries it.
FROM ${BASE_NAME}@${BASE_DIGEST} AS terraform
# Before the first terraform runs: no call to checkpoint-api.hashicorp.com, no random signature file.
ENV CHECKPOINT_DISABLE=1
ARG TERRAFORM_TOOL=terraform
ARG TERRAFORM_VERSION
COPY runner/terraform.sha256sums runner/terraform-record.sh /verify/
COPY --chmod=0755 dist/terraform /verify/terraform
RUN set -eu; \
    test -n "${TERRAFORM_VERSION}" || { echo "build arg TERRAFORM_VERSION is required" >&2; exit 1; }; \
    key="${TERRAFORM_TOOL}_${TERRAFORM_VERSION}_linux_$(dpkg --print-architecture)"; \
    want=$(awk -v key="$key" '$1 !~ /^#/ && $2 == key { print $1 }' /verify/terraform.sha256sums); \
    got=$(sha256sum /verify/terraform | cut -d' ' -f1); \
    if [ -z "$want" ]; then echo "no sha256 committed for $key in runner/terraform.sha256sums: run scripts/image/pin-terraform.sh ${TERRAFORM_VERSION}" >&2; exit 1; fi; \
    if [ "$got" != "$want" ]; then echo "terraform binary REFUSED: sha256 $got is not $want, the one committed for $key (runner/terraform.sha256sums)" >&2; exit 1; fi; \
    /verify/terraform version -json > /verify/version.json; \
    grep -q "\"terraform_version\": \"${TERRAFORM_VERSION}\"" /verify/version.json \
      || { echo "the verified binary does not report version ${TERRAFORM_VERSION}" >&2; exit 1; }; \
    echo "$got" > /verify/sha256; \
    # The record the runner trusts instead of a `version` launch while /usr/local/bin/terraform is this file.
    sh /verify/terraform-record.sh /verify/terraform /usr/local/bin/terraform > /verify/terraform-verified.json

# 2. The operating system part, from Debian packages apt verifies against the archive's key: only
# their libraries and the files a Job uses, each package recorded where scanners read it
# (/var/lib/dpkg/status.d/, with the md5sums of its files present), and the node binary of the base.
FROM ${BASE_NAME}@${BASE_DIGEST} AS rootfs
ARG PACKAGES="base-files gcc-12-base libc6 libgcc-s1 libstdc++6 ca-certificates tini busybox-static"
COPY runner/terraformrc /rootfs/etc/captf-runner/terraformrc
RUN set -eu; \
    export LC_ALL=C; \
    apt-get update -qq; \
    mkdir -p /debs /staging; cd /debs; \
    apt-get download -qq ${PACKAGES}; \
    r=/rootfs; status=$r/var/lib/dpkg/status.d; mkdir -p "$status"; \
    for deb in /debs/*.deb; do \
      name=$(dpkg-deb -f "$deb" Package); dir=/staging/$name; \
      dpkg-deb -x "$deb" "$dir"; \
      # What no Job runs: documentation (but the copyright), the C library's programs and character set
      # converters, dpkg's vendor data, motd and initramfs scripts, the second tini.
      find "$dir/usr/share/doc" -type f ! -name copyright -delete 2>/dev/null || true; \
      rm -rf "$dir/usr/share/man" "$dir/usr/share/info" "$dir/usr/share/lintian" "$dir/usr/share/locale" "$dir/usr/share/doc-base" \
             "$dir/sbin" "$dir/usr/sbin" "$dir/usr/libexec" "$dir/usr/lib/x86_64-linux-gnu/gconv" "$dir/etc/update-motd.d" "$dir/etc/dpkg" \
             "$dir/usr/share/initramfs-tools" "$dir/usr/bin/tini-static"; \
      if [ "$name" != tini ]; then rm -rf "$dir/usr/bin"; fi; \
      find "$dir" -depth -type d -empty -delete; \
      { dpkg-deb -f "$deb"; echo "Status: install ok installed"; } | grep -v '^$' > "$status/$name"; \
      (cd "$dir" && find . -type f | sort | xargs -r md5sum | sed 's#  \./#  #') > "$status/$name.md5sums"; \
      cp -a "$dir/." "$r/"; \
    done; \
    # busybox: the /bin/sh of local-exec and the env of the runner's #! line; no other applet is linked.
    ln -s busybox "$r/bin/sh"; ln -s /bin/busybox "$r/usr/bin/env"; \
    # The CA bundle update-ca-certificates would make, in a fixed order.
    mkdir -p "$r/etc/ssl/certs"; \
    find "$r/usr/share/ca-certificates" -name '*.crt' | sort | xargs cat > "$r/etc/ssl/certs/ca-certificates.crt"; \
    printf 'root:x:0:0:root:/root:/sbin/nologin\nrunner:x:10001:10001:captf-runner:/tmp:/sbin/nologin\n' > "$r/etc/passwd"; \
    printf 'root:x:0:\nrunner:x:10001:\n' > "$r/etc/group"; \
    printf 'passwd: files\ngroup: files\nhosts: files dns\n' > "$r/etc/nsswitch.conf"; \
    mkdir -p "$r/tmp" "$r/captf/work" "$r/usr/share/terraform/plugins" "$r/usr/local/bin"; \
    chmod 1777 "$r/tmp"; chown 10001:10001 "$r/captf/work"; \
    cp /usr/local/bin/node "$r/usr/local/bin/node"; \
    # The loader finds the libraries in Debian's directories without a cache (no ldconfig in the image).
    chroot "$r" /usr/local/bin/node -e 0

# 3. The runner and its SBOM: the bundle, its startup snapshot, and what it and the image are made of
# (CycloneDX). The snapshot's blob is made here by the base's node, the very binary the image runs
# (stage rootfs copies it): node takes a blob from no other (contract/sections/image.md, "The start").
FROM ${BASE_NAME}@${BASE_DIGEST} AS app
ARG CREATED
ARG RUNNER_VERSION=0.0.0-dev
ARG TERRAFORM_TOOL=terraform
COPY dist/captf-runner.mjs /app/usr/local/lib/captf-runner/captf-runner.mjs
COPY dist/chunks/ /app/usr/local/lib/captf-runner/chunks/
COPY dist/snapshot/lib/ /app/usr/local/lib/captf-runner/snapshot/lib/
COPY runner/captf-runner.sh /app/usr/local/bin/captf-runner
COPY dist/snapshot/captf-runner.cjs scripts/image/snapshot-blob.sh /snapshot/
# The same bytes in every build, whatever PID, stdio and environment the builder gives this step
# (scripts/image/snapshot-blob.sh).
RUN sh /snapshot/snapshot-blob.sh /usr/local/bin/node /snapshot/captf-runner.cjs /snapshot/captf-runner.blob
COPY dist/npm-sbom.cdx.json runner/image-sbom.mjs /sbom/
COPY --from=rootfs /rootfs/var/lib/dpkg/status.d/ /sbom/status.d/
COPY --from=rootfs /rootfs/etc/debian_version /sbom/
COPY --from=terraform /verify/version.json /verify/sha256 /sbom/terraform/
COPY --from=terraform /verify/terraform-verified.json /app/usr/local/lib/captf-runner/terraform-verified.json
RUN set -eu; \
    cd /app; \
    find . -type d -exec chmod 0755 {} +; find . -type f -exec chmod 0644 {} +; \
    chmod 0755 usr/local/lib/captf-runner/captf-runner.mjs usr/local/bin/captf-runner; \
    cp /snapshot/captf-runner.blob usr/local/lib/captf-runner/snapshot/captf-runner.blob; \
    mkdir -p usr/share/captf-runner; \
    node /sbom/image-sbom.mjs --npm /sbom/npm-sbom.cdx.json --status /sbom/status.d --debian-version /sbom/debian_version \
      --terraform /sbom/terraform --terraform-tool "${TERRAFORM_TOOL}" --node-version "$(node --version)" --runner-version "${RUNNER_VERSION}" --created "${CREATED}" \
      > usr/share/captf-runner/sbom.cdx.json

# The image: nothing above but what these three stages put together; no RUN step here.
FROM scratch
COPY --from=rootfs /rootfs/ /
COPY --from=terraform /verify/terraform /usr/local/bin/terraform
COPY --from=app /app/ /

ENV PATH=/usr/local/bin:/usr/bin:/bin \
    TF_IN_AUTOMATION=1 \
    TF_CLI_CONFIG_FILE=/etc/captf-runner/terraformrc \
    CHECKPOINT_DISABLE=1 \
    HOME=/tmp \
    TMPDIR=/tmp \
    CAPTF_TERRAFORM=/usr/local/bin/terraform

USER 10001:10001
WORKDIR /captf/work

# tini is PID 1: it reaps orphans (terraform's local-exec children) and forwards SIGTERM to the
# runner alone, which then stops terraform gracefully (one SIGINT) and writes an interrupted result.
ENTRYPOINT ["tini", "--", "captf-runner"]
CMD ["--help"]

ARG BASE_NAME
ARG BASE_DIGEST
ARG TERRAFORM_VERSION
ARG RUNNER_VERSION=0.0.0-dev
ARG SOURCE_URL=https://github.com/captf/captf-runner
ARG REVISION=unknown
ARG CREATED
LABEL org.opencontainers.image.title="captf-runner" \
      org.opencontainers.image.description="Runs terraform for a Cluster API provider: one Job, one op, one result" \
      org.opencontainers.image.version="${RUNNER_VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.source="${SOURCE_URL}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.base.name="${BASE_NAME}" \
      org.opencontainers.image.base.digest="${BASE_DIGEST}" \
      io.captf.runner.contract="runner.captf.io/v1" \
      io.captf.runner.terraform-version="${TERRAFORM_VERSION}" \
      io.captf.runner.sbom="/usr/share/captf-runner/sbom.cdx.json"
