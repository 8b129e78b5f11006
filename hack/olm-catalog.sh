#!/usr/bin/env bash
# Builds what OperatorHub installs Soko from on the local cluster, as a publisher would for a
# registry (here the cluster's registry name, which the nodes import into):
#   target/images/soko-operator-bundle-<version>.oci.tar   the working tree's bundle, published
#   target/images/soko-catalog-<version>.oci.tar           a file-based catalog of package
#       soko-operator, channel alpha: the previous release's bundle, then this one replacing it,
#       served by `opm serve` (the image OLM's CatalogSource pod runs)
# Prints the catalog image's reference by digest. Catalogs name bundles by digest, and so does the
# CatalogSource: OLM pulls an image named by tag every time (pull policy Always).
#
#   hack/olm-catalog.sh PREVIOUS_RELEASE_DIR     (the folder hack/previous-release.sh prints)
set -euo pipefail
SOKO_LOG_TAG=olm-catalog
source "$(dirname "$0")/lib.sh"
ROOT=$(soko_root)
BIN=${SOKO_CACHE:-$HOME/.cache/soko}/bin
previous=${1:?usage: hack/olm-catalog.sh PREVIOUS_RELEASE_DIR}
registry=$(cluster_registry)
version=$(grep -m1 -oP '(?<=<version>)[^<]+' "$ROOT/pom.xml")
[ -d "$previous/olm-bundle" ] || die "no olm-bundle in $previous (run: hack/previous-release.sh)"
for tool in opm grpc_health_probe; do
  [ -x "$BIN/$tool" ] || die "$tool is missing in $BIN (run: make tools-node)"
done

IMAGE_REGISTRY=$registry bash "$ROOT/hack/images.sh" bundle >&2

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
configs=$work/configs/soko-operator
mkdir -p "$configs"
package=soko-operator
# Each bundle's CSV name, in channel order: the previous release, then the working tree's.
csv_name() { sed -n 's/^  name: \(.*\)$/\1/p' "$1"/manifests/*.clusterserviceversion.yaml | head -1; }
old=$(csv_name "$previous/olm-bundle")
new=$(csv_name "$ROOT/target/images/publish/olm-bundle")
if [ -z "$old" ] || [ -z "$new" ]; then die "a bundle without a CSV name"; fi
# digest ARCHIVE: the digest of the image manifest in an OCI archive, as containerd imports it.
digest() {
  tar -xOf "$1" index.json | python3 -c 'import json, sys; print(json.load(sys.stdin)["manifests"][0]["digest"])'
}
render() { # BUNDLE_DIR BUNDLE_ARCHIVE
  "$BIN/opm" render "$1" -o yaml \
    --alpha-image-ref-template "$registry/soko-operator-bundle@$(digest "$2")" >>"$configs/bundles.yaml"
}
render "$previous/olm-bundle" "$(compgen -G "$previous/soko-operator-bundle-*.oci.tar")"
render "$ROOT/target/images/publish/olm-bundle" "$ROOT/target/images/soko-operator-bundle-$version.oci.tar"
cat >"$configs/package.yaml" <<EOF
---
schema: olm.package
name: $package
defaultChannel: alpha
---
schema: olm.channel
package: $package
name: alpha
entries:
  - name: $old
  - name: $new
    replaces: $old
EOF
"$BIN/opm" validate "$work/configs" >&2 || die "opm refuses the catalog"
# The serving cache is built with the image, as upstream's catalog images do: `opm serve` checks the
# cache it is given against the catalog and refuses to start without one; it locks and opens the
# cache for writing, so the cache belongs to the image's user.
"$BIN/opm" serve "$work/configs" --cache-dir="$work/cache" --cache-only >&2 || die "opm cannot cache the catalog"

python3 "$ROOT/hack/oci-image.py" --name "$registry/soko-catalog:$version" \
  --out "$ROOT/target/images/soko-catalog-$version.oci.tar" \
  --file "$(readlink -f "$BIN/opm"):/bin/opm" \
  --file "$(readlink -f "$BIN/grpc_health_probe"):/bin/grpc_health_probe" \
  --tree "$work/configs:/configs" --tree "$work/cache:/tmp/cache:1001" --dir /tmp:1777 --env PATH=/bin --user 1001 \
  --label operators.operatorframework.io.index.configs.v1=/configs \
  --entrypoint /bin/opm --cmd serve --cmd /configs --cmd=--cache-dir=/tmp/cache
log "catalog of $old and $new: target/images/soko-catalog-$version.oci.tar"
echo "$registry/soko-catalog@$(digest "$ROOT/target/images/soko-catalog-$version.oci.tar")"
