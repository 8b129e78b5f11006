#!/usr/bin/env bash
# Puts the pinned csi.proto into OUTDIR (argument 1), taken from the Go module proxy and verified
# against the sha256 in hack/versions.env. Nothing of the spec is committed to this repository.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=versions.env
source "$here/versions.env"
out=${1:?usage: csi-proto.sh OUTDIR}

dir=$(cd "${TMPDIR:-/tmp}" && GOFLAGS=-mod=mod go mod download -json "$CSI_SPEC_MODULE@$CSI_SPEC_VERSION" \
  | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -n "$dir" ] || { echo "csi-proto: go mod download gave no directory for $CSI_SPEC_MODULE@$CSI_SPEC_VERSION" >&2; exit 1; }
actual=$(sha256sum "$dir/csi.proto" | cut -d' ' -f1)
if [ "$actual" != "$CSI_PROTO_SHA256" ]; then
  echo "csi-proto: checksum mismatch for csi.proto $CSI_SPEC_VERSION: got $actual, pinned $CSI_PROTO_SHA256" >&2
  exit 1
fi
mkdir -p "$out"
# protoc's Java generator gives a map field `parameters` a deprecated `getMutableParameters()`
# accessor, which collides with the accessor of the real field `mutable_parameters` in the same
# message and the generated code does not compile. Field names never reach the wire (protobuf
# encodes field numbers), so the build copy names that field `mutable_params`; Java code calls
# `getMutableParamsMap()`. The verified original stays untouched in the module cache.
sed 's/\bmap<string, string> mutable_parameters = /map<string, string> mutable_params = /' \
  "$dir/csi.proto" >"$out/csi.proto"
grep -q 'mutable_params = 8;' "$out/csi.proto" || { echo "csi-proto: rename of mutable_parameters failed" >&2; exit 1; }
