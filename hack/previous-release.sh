#!/usr/bin/env bash
# Builds the newest release named in hack/dist/releases.yaml (or the one named by the argument,
# e.g. `hack/previous-release.sh 0.1.0`) from its commit, once per commit: its
# driver and operator images (OCI archives), its Helm chart and its OLM bundle (image and folder,
# published for the local cluster) go to $SOKO_CACHE/releases/<version>-<commit>/, where the upgrade
# tier starts from. Prints that folder.
# The commit must be in this clone's history (a shallow clone needs `git fetch --unshallow`).
set -euo pipefail
SOKO_LOG_TAG=previous-release
source "$(dirname "$0")/lib.sh"
ROOT=$(soko_root)
SOKO_CACHE=${SOKO_CACHE:-$HOME/.cache/soko}

wanted=${1:-}
read -r version commit < <(python3 - "$ROOT/hack/dist/releases.yaml" "$wanted" <<'EOF'
import sys
import yaml
releases = yaml.safe_load(open(sys.argv[1], encoding="utf-8")).get("releases") or []
chosen = [r for r in releases if not sys.argv[2] or str(r["version"]) == sys.argv[2]]
if chosen:
    print(chosen[0]["version"], chosen[0]["commit"])
EOF
) || die "hack/dist/releases.yaml names no release${wanted:+ $wanted}"

dir=$SOKO_CACHE/releases/$version-$commit
bundle=soko-operator-bundle-$version.oci.tar
if [ -f "$dir/chart/Chart.yaml" ] && [ -f "$dir/$bundle" ]; then
  log "reusing release $version ($commit) from $dir"
  echo "$dir"
  exit 0
fi
git -C "$ROOT" cat-file -e "$commit^{commit}" 2>/dev/null ||
  die "commit $commit of release $version is not in this clone's history (git fetch --unshallow)"

src=$(mktemp -d)
cleanup() {
  git -C "$ROOT" worktree remove --force "$src/tree" 2>/dev/null || true
  rm -rf "$src" "$dir.partial"
}
trap cleanup EXIT
git -C "$ROOT" worktree add --quiet --detach "$src/tree" "$commit"
if [ ! -f "$dir/chart/Chart.yaml" ]; then
  log "building release $version from $commit"
  (cd "$src/tree" && mvn -B -q -o package -DskipTests >"$src/mvn.log" 2>&1) ||
    { tail -40 "$src/mvn.log" >&2; die "the build of release $version failed"; }
  bash "$src/tree/hack/images.sh" driver >&2
  bash "$src/tree/hack/images.sh" operator >&2
  rm -rf "$dir.partial"
  mkdir -p "$dir.partial"
  cp "$src/tree/target/images/soko-driver-$version.oci.tar" \
    "$src/tree/target/images/soko-operator-$version.oci.tar" "$dir.partial/"
  cp -r "$src/tree/helm/soko" "$dir.partial/chart"
  mv "$dir.partial" "$dir"
fi
# The release's OLM bundle as published to the local cluster's registry name: its CSV runs
# $(cluster_registry)/soko-operator:<version>, the image the nodes import (OLM upgrade tier).
log "building the OLM bundle of release $version for $(cluster_registry)"
IMAGE_REGISTRY=$(cluster_registry) bash "$src/tree/hack/images.sh" bundle >&2
rm -rf "$dir/olm-bundle"
cp -r "$src/tree/target/images/publish/olm-bundle" "$dir/olm-bundle"
cp "$src/tree/target/images/$bundle" "$dir/$bundle.partial"
mv "$dir/$bundle.partial" "$dir/$bundle"
log "release $version ready in $dir"
echo "$dir"
