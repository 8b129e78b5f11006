#!/usr/bin/env bash
# Puts the pinned .proto files the driver compiles into OUTDIR (argument 1): csi.proto (the CSI spec)
# pluginregistration/v1/api.proto (the kubelet's plugin registration API) and nri/api.proto
# (containerd's Node Resource Interface, which the node plugin speaks over ttrpc). With a second
# argument `snapshot-metadata` it puts instead the snapshot metadata sidecar's API, schema.proto of
# external-snapshot-metadata, which the operator's end-to-end tests call as a backup application
# does. Each is taken from its Go module through the Go module proxy and verified against the
# sha256 in hack/versions.env. Nothing of any is committed to this repository; the build copies may
# be edited, as said below.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=versions.env
source "$here/versions.env"
out=${1:?usage: protos.sh OUTDIR [snapshot-metadata]}
set=${2:-driver}

# verified MODULE VERSION FILE SHA256: prints the path of FILE in the module cache once its
# checksum matches the pin.
verified() {
  local module=$1 version=$2 file=$3 pinned=$4 dir actual
  dir=$(cd "${TMPDIR:-/tmp}" && GOFLAGS=-mod=mod go mod download -json "$module@$version" \
    | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -n "$dir" ] || { echo "protos: go mod download gave no directory for $module@$version" >&2; exit 1; }
  actual=$(sha256sum "$dir/$file" | cut -d' ' -f1)
  if [ "$actual" != "$pinned" ]; then
    echo "protos: checksum mismatch for $file of $module@$version: got $actual, pinned $pinned" >&2
    exit 1
  fi
  echo "$dir/$file"
}

if [ "$set" = snapshot-metadata ]; then
  mkdir -p "$out"
  schema=$(verified "$SNAPSHOT_METADATA_MODULE" "$SNAPSHOT_METADATA_VERSION" proto/schema.proto \
    "$SNAPSHOT_METADATA_PROTO_SHA256")
  # Unchanged: package snapshotmetadata and no Java options, so protoc makes Java package
  # snapshotmetadata, outer class Schema, service stub SnapshotMetadataGrpc.
  cp "$schema" "$out/schema.proto"
  chmod u+w "$out/schema.proto"
  exit 0
fi
[ "$set" = driver ] || { echo "protos: unknown set $set (driver or snapshot-metadata)" >&2; exit 1; }

mkdir -p "$out/pluginregistration/v1"

csi=$(verified "$CSI_SPEC_MODULE" "$CSI_SPEC_VERSION" csi.proto "$CSI_PROTO_SHA256")
# protoc's Java generator gives a map field `parameters` a deprecated `getMutableParameters()`
# accessor, which collides with the accessor of the real field `mutable_parameters` in the same
# message and the generated code does not compile. Field names never reach the wire (protobuf
# encodes field numbers), so the build copy names that field `mutable_params`; Java code calls
# `getMutableParamsMap()`. The verified original stays untouched in the module cache.
sed 's/\bmap<string, string> mutable_parameters = /map<string, string> mutable_params = /' \
  "$csi" >"$out/csi.proto"
grep -q 'mutable_params = 8;' "$out/csi.proto" || { echo "protos: rename of mutable_parameters failed" >&2; exit 1; }

reg=$(verified "$KUBELET_MODULE" "$KUBERNETES_STAGING_VERSION" \
  pkg/apis/pluginregistration/v1/api.proto "$PLUGINREGISTRATION_PROTO_SHA256")
# The file's proto package is plain `pluginregistration` (it says "This should have been v1"), and
# it names no Java package, so protoc would put its classes in a top-level Java package
# `pluginregistration` with the outer class `Api`. The build copy gains a Java package and outer
# class name; these options change no wire name (the service stays
# `pluginregistration.Registration`, which is what the kubelet calls). The file imports nothing and
# has no gogoproto options, so nothing else needs stripping.
if grep -q '^option java_' "$reg"; then
  echo "protos: $reg now sets Java options itself; review the injection below" >&2
  exit 1
fi
sed '/^option go_package = /a\
option java_package = "io.k8s.kubelet.pluginregistration.v1";\
option java_outer_classname = "PluginRegistration";' "$reg" >"$out/pluginregistration/v1/api.proto"
grep -q '^option java_outer_classname = "PluginRegistration";' "$out/pluginregistration/v1/api.proto" \
  || { echo "protos: Java options were not added to pluginregistration/v1/api.proto" >&2; exit 1; }

nri=$(verified "$NRI_MODULE" "$NRI_VERSION" pkg/api/api.proto "$NRI_PROTO_SHA256")
# Package nri.pkg.api.v1alpha1 and no Java options: the build copy gains a Java package and outer
# class name, which change no wire name (the services stay nri.pkg.api.v1alpha1.Plugin and .Runtime,
# the names the runtime calls). The file imports nothing.
if grep -q '^option java_' "$nri"; then
  echo "protos: $nri now sets Java options itself; review the injection below" >&2
  exit 1
fi
mkdir -p "$out/nri"
sed '/^option go_package = /a\
option java_package = "io.containerd.nri.v1alpha1";\
option java_outer_classname = "Nri";' "$nri" >"$out/nri/api.proto"
grep -q '^option java_outer_classname = "Nri";' "$out/nri/api.proto" \
  || { echo "protos: Java options were not added to nri/api.proto" >&2; exit 1; }
