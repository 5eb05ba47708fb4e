#!/usr/bin/env bash
# Pins a terraform (or OpenTofu) release for the image, when the version changes: downloads the
# release zip, its SHA256SUMS and their signature, verifies the signature (terraform: HashiCorp's
# release key, known by its fingerprint; OpenTofu: cosign, the release workflow's keyless
# certificate), checks the zip against the signed sums, and writes the sha256 of the binary inside
# it to runner/terraform.sha256sums, which the Dockerfile's first stage holds every binary against.
# A person runs it (it needs the network) and commits the result; CI never runs it.
#
#   scripts/image/pin-terraform.sh VERSION [ARCH...]            terraform, ARCH amd64 (default) or arm64 …
#   TOOL=tofu scripts/image/pin-terraform.sh VERSION [ARCH...]  OpenTofu (needs cosign)
#   OFFLINE_DIR=DIR                                       the release files are already in DIR (same names)
# Leaves the verified binary of the last ARCH in the work dir and prints its path (TERRAFORM_BIN).
set -euo pipefail
cd "$(dirname "$0")/../.."

version=${1:?usage: scripts/image/pin-terraform.sh VERSION [ARCH...]}
shift
archs=("${@:-amd64}")
tool=${TOOL:-terraform}
pins=${PIN_FILE:-runner/terraform.sha256sums}
# HashiCorp's release key (https://www.hashicorp.com/.well-known/pgp-key.txt), known by its fingerprint.
key_url=${RELEASE_KEY_URL:-https://www.hashicorp.com/.well-known/pgp-key.txt}
key_fingerprint=${RELEASE_KEY_FINGERPRINT:-C874011F0AB405110D02105534365D9472D7468F}

case "$tool" in
  terraform) base=https://releases.hashicorp.com/terraform/$version ;;
  tofu) base=https://github.com/opentofu/opentofu/releases/download/v$version ;;
  *) echo "pin-terraform: TOOL must be terraform or tofu, not $tool" >&2; exit 2 ;;
esac
sums=${tool}_${version}_SHA256SUMS
work=$(mktemp -d)
trap 'rm -rf "$work/gnupg"' EXIT

fetch() { # fetch NAME: from OFFLINE_DIR, or downloaded
  if [ -n "${OFFLINE_DIR:-}" ]; then cp "$OFFLINE_DIR/$1" "$work/$1"; else curl -fsSL --proto '=https' -o "$work/$1" "$base/$1"; fi
}

fetch "$sums"
if [ "$tool" = terraform ]; then
  fetch "$sums.sig"
  export GNUPGHOME=$work/gnupg
  mkdir -m 0700 "$GNUPGHOME"
  if [ -n "${OFFLINE_DIR:-}" ]; then cp "$OFFLINE_DIR/release-key.asc" "$work/key.asc"; else curl -fsSL --proto '=https' -o "$work/key.asc" "$key_url"; fi
  gpg --batch --quiet --import "$work/key.asc" 2>/dev/null
  # The signature must be good and made by the key with this fingerprint (or one of its subkeys):
  # VALIDSIG's last field is the primary key's fingerprint.
  status=$(gpg --batch --status-fd 1 --verify "$work/$sums.sig" "$work/$sums" 2>/dev/null || true)
  if ! grep -Eq "^\[GNUPG:\] VALIDSIG .* ${key_fingerprint}\$" <<<"$status"; then
    echo "pin-terraform: $sums is not signed by the release key $key_fingerprint: nothing pinned" >&2
    exit 1
  fi
else
  fetch "$sums.sig"
  fetch "$sums.pem"
  cosign verify-blob --certificate "$work/$sums.pem" --signature "$work/$sums.sig" \
    --certificate-identity-regexp '^https://github\.com/opentofu/opentofu/\.github/workflows/release\.yml@refs/heads/v[0-9]+\.[0-9]+$' \
    --certificate-oidc-issuer https://token.actions.githubusercontent.com "$work/$sums" >&2 \
    || { echo "pin-terraform: $sums is not signed by OpenTofu's release workflow: nothing pinned" >&2; exit 1; }
fi

for arch in "${archs[@]}"; do
  zip=${tool}_${version}_linux_${arch}.zip
  fetch "$zip"
  want=$(awk -v zip="$zip" '$2 == zip { print $1 }' "$work/$sums")
  got=$(sha256sum "$work/$zip" | cut -d' ' -f1)
  if [ -z "$want" ] || [ "$got" != "$want" ]; then
    echo "pin-terraform: $zip has sha256 $got, the signed $sums says ${want:-nothing}: nothing pinned" >&2
    exit 1
  fi
  rm -f "$work/$tool"
  unzip -q -o "$work/$zip" "$tool" -d "$work"
  binary=$(sha256sum "$work/$tool" | cut -d' ' -f1)
  key=${tool}_${version}_linux_${arch}
  # One line per key: a new pin replaces the old one, with a comment saying where it came from.
  grep -v -e "  $key\$" -e "^# $key: " "$pins" >"$pins.tmp" || true
  {
    cat "$pins.tmp"
    echo "# $key: zip sha256 $got in the signed $sums (scripts/image/pin-terraform.sh, $(date -u +%Y-%m-%d))"
    echo "$binary  $key"
  } >"$pins"
  rm -f "$pins.tmp"
  echo "pinned $key: $binary" >&2
done
echo "$work/$tool"
