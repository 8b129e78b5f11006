#!/usr/bin/env bash
# Tests the built container images for real (run as root; builds them first when missing):
#   driver:   --help; then the image runs as a node plugin with a pool and its socket on host
#             folders, answers a ready Probe and creates (and deletes) a volume over the socket.
#   operator: runs as uid 65532, answers --help and renders a StorageCluster offline.
#   bundle:   the OLM bundle image carries exactly olm-bundle/manifests and metadata.
# Prints "N passed, M failed" last, writes target/test-reports/images/images.xml (JUnit) and exits
# non-zero on any failure.
#
# Usage: hack/test-images.sh [driver|operator|bundle|all]     (default: all)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=images.sh
source "$ROOT/hack/images.sh"

# Containers run with runc (crun fails on this host's hybrid cgroups) and explicit ulimits (the
# defaults are refused); the tests use Unix sockets and files only, so no network.
RUN=(podman run --runtime runc --ulimit nofile=10000:10000 --ulimit nproc=1000:1000 --network none)

passed=0
failed=0
REPORT="$(test_reports images)/images.xml"
rm -f "$REPORT" "$REPORT.cases"
WORK="$(mktemp -d /tmp/soko-image-test.XXXXXX)"
CONTAINERS=()

cleanup() {
  local c
  for c in "${CONTAINERS[@]}"; do podman rm -f "$c" >/dev/null 2>&1 || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

check() { # name, command... : runs the command, records the result, shows output on failure
  local name="$1" out
  shift
  if out="$("$@" 2>&1)"; then
    passed=$((passed + 1))
    printf 'PASS %s\n' "$name"
    junit_case "$REPORT" "$name"
  else
    failed=$((failed + 1))
    junit_case "$REPORT" "$name" "$out"
    printf 'FAIL %s\n%s\n' "$name" "$(printf '%s\n' "$out" | tail -40 | sed 's/^/    /')"
  fi
}

# component -> builds the image from this tree (the tag is the project version, so an image left in
# local storage by an older tree would carry the same name: testing it would prove nothing).
# TEST_IMAGES_REUSE=1 tests whatever local storage holds, for quick reruns by hand.
ensure_image() {
  local image
  image="$(image_name "$1")"
  if [[ "${TEST_IMAGES_REUSE:-0}" != 1 ]] || ! podman image exists "$image"; then
    build_image "$1" >/dev/null
  fi
  printf '%s\n' "$image"
}

# component: the OCI archive hack/images.sh writes holds an index naming the image's tag.
archive_is_oci() {
  local archive index
  archive="$OUT/soko-$1-${IMAGE_TAG:-$(project_version)}.oci.tar"
  mkdir -p "$OUT"
  [[ -s "$archive" ]] || podman save --quiet --format oci-archive -o "$archive" "$(image_name "$1")"
  index="$(tar -xOf "$archive" index.json)" || return 1
  grep -q '"org.opencontainers.image.ref.name":"[^"]*'"${IMAGE_TAG:-$(project_version)}"'"' \
    <<<"$index" || { echo "no ref name with the tag in index.json: $index"; return 1; }
  tar -tf "$archive" | grep -q '^oci-layout$' || { echo "no oci-layout in $archive"; return 1; }
}

output_has() { # pattern, command... : the command succeeds and its output matches the pattern
  local pattern="$1" out
  shift
  out="$("$@" 2>&1)" || { printf 'exit %s:\n%s\n' "$?" "$out"; return 1; }
  grep -qiE -- "$pattern" <<<"$out" || { printf 'no /%s/ in:\n%s\n' "$pattern" "$out"; return 1; }
}

# --- driver ---------------------------------------------------------------------------------------

# mode (node|controller), check (probe|create): starts the driver image with its socket (and, in
# node mode, a pool) on host folders and runs the CSI client against the socket.
driver_serves() {
  local image="$1" mode="$2" what="$3" name="soko-image-test-driver-$2-$$" rc=0
  local csi="$WORK/$mode/csi" pool="$WORK/$mode/pool" args
  mkdir -p "$csi" "$pool"
  CONTAINERS+=("$name")
  args=(--mode="$mode" --endpoint=unix:///csi/csi.sock)
  [[ "$mode" == controller ]] ||
    args+=(--node-id=image-test "--pool=name=default,path=/var/lib/soko/pools/default")
  # Privileged with the host's /dev: the driver attaches loop devices and mounts, as in the DaemonSet.
  "${RUN[@]}" -d --name "$name" --privileged -v /dev:/dev \
    -v "$csi:/csi" -v "$pool:/var/lib/soko/pools/default" "$image" "${args[@]}" >/dev/null
  # Wait for the socket while the container lives, so a driver that exits fails at once.
  local waited=0
  until [[ -S "$csi/csi.sock" ]]; do
    if [[ "$(podman inspect --format '{{.State.Running}}' "$name" 2>/dev/null)" != true ]] ||
      ((waited >= 120)); then
      echo "driver did not create its socket (running: $(podman inspect --format \
        '{{.State.Running}} exit {{.State.ExitCode}}' "$name" 2>&1), ${waited}x0.5s)"
      rc=1
      break
    fi
    sleep 0.5
    waited=$((waited + 1))
  done
  # The client runs on the host with the driver's own jar: same generated CSI classes and gRPC.
  ((rc != 0)) || java -cp "$(jar_path driver)" \
    -Dlogback.configurationFile="$ROOT/images/test/client-logback.xml" \
    "$ROOT/images/test/CsiCheck.java" "$csi/csi.sock" 60 "$what" || rc=$?
  if ((rc != 0)); then
    echo "--- driver container log:"
    podman logs "$name" 2>&1 | tail -30
  fi
  podman rm -f "$name" >/dev/null 2>&1 || true
  return "$rc"
}

test_driver() {
  local image
  image="$(ensure_image driver)"
  check "driver image runs as root (it mounts)" \
    test "$(podman image inspect --format '{{.Config.User}}' "$image")" = "0:0"
  # shellcheck disable=SC2016 # the image's shell expands $t
  check "driver image carries losetup, mount, mkfs/resize for ext4 and xfs, btrfs" \
    "${RUN[@]}" --rm --entrypoint /bin/sh "$image" -c \
    'for t in losetup mount umount mkfs.ext4 resize2fs mkfs.xfs xfs_growfs btrfs cp truncate; do
       command -v "$t" >/dev/null || { echo "missing $t"; exit 1; }; done'
  check "driver image saved as an OCI archive" archive_is_oci driver
  check "driver image answers --help" output_has 'endpoint' "${RUN[@]}" --rm "$image" --help
  # -Xshare:on makes the JVM fail instead of silently ignoring an unusable class-data archive.
  check "driver image's class-data archive maps (-Xshare:on)" output_has 'endpoint' \
    "${RUN[@]}" --rm -e SOKO_JAVA_OPTS=-Xshare:on "$image" --help
  # JNA's stub from the image, on a read-only root filesystem: mounts never need a writable /tmp.
  check "driver image loads JNA's native stub read-only (mount and loop system calls)" \
    output_has 'Prefix: linux-x86-64' "${RUN[@]}" --rm --read-only --entrypoint java "$image" \
    -Djna.boot.library.path=/opt/soko/native -Djna.nounpack=true \
    -cp /opt/soko/soko-driver.jar com.sun.jna.Native
  check "driver image (controller mode): ready Probe over its socket" \
    driver_serves "$image" controller probe
  check "driver image (node mode): ready Probe and CreateVolume over its socket" \
    driver_serves "$image" node create
}

# --- operator -------------------------------------------------------------------------------------

operator_renders() {
  local image="$1"
  mkdir -p "$WORK/in"
  cat >"$WORK/in/storagecluster.yaml" <<'EOF'
apiVersion: soko.dev/v1alpha1
kind: StorageCluster
metadata:
  name: soko
spec:
  pools:
    - name: default
      path: /var/lib/soko/pools/default
EOF
  chmod -R a+rX "$WORK/in"
  output_has 'kind: *"?DaemonSet"?$' "${RUN[@]}" --rm -v "$WORK/in:/in:ro" "$image" \
    render /in/storagecluster.yaml --kubernetes-version 1.34
}

test_operator() {
  local image
  image="$(ensure_image operator)"
  check "operator image runs as non-root uid 65532" \
    test "$(podman image inspect --format '{{.Config.User}}' "$image")" = "65532:65532"
  check "operator image saved as an OCI archive" archive_is_oci operator
  check "operator image answers --help" output_has 'render' "${RUN[@]}" --rm "$image" --help
  check "operator image renders a StorageCluster offline" operator_renders "$image"
}

# --- OLM bundle -----------------------------------------------------------------------------------

bundle_image_holds_bundle() {
  local image="$1" label name="soko-image-test-bundle-$$" dir="$WORK/bundle"
  label="$(podman image inspect --format \
    '{{index .Labels "operators.operatorframework.io.bundle.package.v1"}}' "$image")"
  [[ "$label" == soko-operator ]] || { echo "package label: '$label'"; return 1; }
  # FROM scratch has nothing to run: copy the content out of a created (never started) container.
  CONTAINERS+=("$name")
  podman create --name "$name" "$image" /none >/dev/null
  mkdir -p "$dir"
  podman cp "$name:/manifests" "$dir/" && podman cp "$name:/metadata" "$dir/"
  podman rm -f "$name" >/dev/null
  diff -r "$ROOT/olm-bundle/manifests" "$dir/manifests" &&
    diff -r "$ROOT/olm-bundle/metadata" "$dir/metadata"
}

test_bundle() {
  local image
  image="$(SKIP_SAVE=1 build_bundle)"
  check "bundle image holds olm-bundle/manifests and metadata with the bundle labels" \
    bundle_image_holds_bundle "$image"
}

case "${1:-all}" in
  driver) test_driver ;;
  operator) test_operator ;;
  bundle) test_bundle ;;
  all) test_driver && test_operator && test_bundle ;;
  *) die "unknown image '$1' (driver, operator, bundle or all)" ;;
esac
printf '%d passed, %d failed\n' "$passed" "$failed"
((failed == 0))
