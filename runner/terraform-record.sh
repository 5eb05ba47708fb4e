#!/bin/sh
# Prints the record of a terraform binary the image build verified (Dockerfile, stage `terraform`),
# as JSON: where it is installed, its sha256, the first line of its `version`, and what lets the
# runner recognise the file cheaply at run time (its size and the sha256 of its first and last 64 KiB;
# src/terraform/verified-record.ts). With the record beside the runner's entry, a run whose terraform
# is that path and that file starts no `version` launch.
#
#   runner/terraform-record.sh FILE INSTALLED_PATH
set -eu
file=$1
installed=$2
case $installed in
  /*) ;;
  *) echo "terraform-record: the installed path must be absolute: $installed" >&2; exit 1 ;;
esac
case $installed in
  *[!A-Za-z0-9_./-]*) echo "terraform-record: the installed path holds characters the record does not take: $installed" >&2; exit 1 ;;
esac
sample=65536
size=$(wc -c < "$file" | tr -d ' ')
sha256=$(sha256sum < "$file" | cut -d' ' -f1)
head_sha256=$(head -c "$sample" "$file" | sha256sum | cut -d' ' -f1)
tail_sha256=$(tail -c "$sample" "$file" | sha256sum | cut -d' ' -f1)
version_line=$(CHECKPOINT_DISABLE=1 TF_CLI_CONFIG_FILE=/dev/null "$file" version | head -n 1)
if ! printf '%s\n' "$version_line" | grep -Eq '^(Terraform|OpenTofu) v[0-9A-Za-z.+-]+$'; then
  echo "terraform-record: $file version printed \"$version_line\", not \"Terraform vX.Y.Z\" or \"OpenTofu vX.Y.Z\"" >&2
  exit 1
fi
printf '{"path":"%s","size":%s,"sha256":"%s","head_sha256":"%s","tail_sha256":"%s","sample_bytes":%s,"version_line":"%s"}\n' \
  "$installed" "$size" "$sha256" "$head_sha256" "$tail_sha256" "$sample" "$version_line"
