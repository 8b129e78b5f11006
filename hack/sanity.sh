#!/usr/bin/env bash
# csi-sanity (the CSI conformance suite, pinned in hack/versions.env) against the real driver jar,
# with real loop devices, filesystems and mounts. Needs root; fails, never skips, without it.
#
#   hack/sanity.sh                    four passes: ACCESS:POOL = mount:dir block:dir mount:xfs mount:btrfs
#   SANITY_PASSES="block:xfs" hack/sanity.sh
#
# ACCESS is csi-sanity's volume access type (mount or block). POOL "dir" is a plain directory on
# the host filesystem (snapshots and clones are sparse copies); "xfs" is an XFS filesystem with
# reflink on a loop device (snapshots and clones are reflink copies); "btrfs" is a btrfs with quotas
# enabled on a loop device, served by the btrfs-subvolume backend (volumes are subvolumes with a
# qgroup limit, bind-mounted; snapshots and clones are subvolume snapshots; filesystem volumes only,
# so it has no block pass).
#   SANITY_FOCUS='CreateVolume' hack/sanity.sh    run a subset (ginkgo focus regexp)
#   (.ci/run refuses SANITY_PASSES and SANITY_FOCUS: CI runs every pass whole)
#   SANITY_KEEP=1 hack/sanity.sh      keep the work dir (logs, JUnit reports) after a success
#
# It starts driver/bin/soko-driver on a temporary pool with small volumes, allowed path roots on a
# temporary directory, runs csi-sanity, prints ran/passed/failed/skipped per pass, then checks that
# nothing leaked (no mount under the work dir, no loop device on a pool image) and fails on any
# test failure or leak. Logs stay in the work dir when something fails; each pass's JUnit report is
# copied to target/test-reports/sanity/ACCESS/POOL.xml (CI's tier sanity:ACCESS:POOL), and a pass
# that wrote none fails.
set -euo pipefail
SOKO_LOG_TAG=sanity
source "$(dirname "$0")/lib.sh"

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
cache=${SOKO_CACHE:-$HOME/.cache/soko}
sanity=$cache/bin/csi-sanity
jar=$repo/driver/target/soko-driver.jar
passes=${SANITY_PASSES:-mount:dir block:dir mount:xfs mount:btrfs}
volume_size=$((64 << 20))
expand_size=$((96 << 20))

# Deliberate skips: each entry is a ginkgo regexp and the reason it does not apply. csi-sanity
# already skips by itself every test whose capability the driver does not advertise
# (ControllerPublish/Unpublish, LIST_VOLUMES_PUBLISHED_NODES, snapshot metadata,
# VOLUME_MOUNT_GROUP); those are counted as "Skipped" in the summary.
# The one "pending" spec is marked pending (PIt) upstream in csi-sanity itself ("ListVolumes
# pagination should detect volumes added between pages..."); it never runs for any driver.
SKIPS=(
  # (none: every test that applies to the advertised capabilities runs)
)

require_root "csi-sanity against the driver"
losetup -f >/dev/null 2>&1 || die "no usable loop device (losetup -f failed); load the loop module"
for tool in mkfs.ext4 mkfs.xfs mkfs.btrfs btrfs losetup findmnt; do
  command -v "$tool" >/dev/null || die "$tool is missing (run hack/deps.sh)"
done

[ -x "$sanity" ] || "$here/tools.sh" csi-sanity
if [ ! -f "$jar" ] || [ -n "$(find "$repo/driver/src" "$repo/driver/pom.xml" -newer "$jar" -print -quit)" ]; then
  echo "==> building the driver jar" >&2
  (cd "$repo" && mvn -B -q -pl driver -am package -DskipTests)
fi

# A short path: a Unix socket path must fit in 107 bytes.
work=$(mktemp -d /tmp/soko-sanity.XXXXXX)
kubelet=$work/kubelet
mkdir -p "$kubelet"
reports=$(test_reports sanity)
rm -rf "$reports" && mkdir -p "$reports"
driver_pid=""

# Makes the pool directory for one pass and prints its path.
make_pool() {
  local kind=$1 dir=$work/pool-$1
  mkdir -p "$dir"
  case $kind in
  dir) ;;
  xfs)
    truncate -s 8G "$work/pool-xfs.img"
    mkfs.xfs -q -m reflink=1 "$work/pool-xfs.img"
    mount -o loop "$work/pool-xfs.img" "$dir"
    ;;
  btrfs)
    truncate -s 8G "$work/pool-btrfs.img"
    mkfs.btrfs -q "$work/pool-btrfs.img" >&2 # it prints notes on stdout even with -q
    mount -o loop "$work/pool-btrfs.img" "$dir"
    btrfs quota enable "$dir"
    ;;
  *) die "unknown pool kind '$kind' (dir, xfs or btrfs)" ;;
  esac
  echo "$dir"
}

leaks() {
  local found=0
  # The XFS and btrfs pools' own mounts are the expected ones.
  if findmnt -rn -o TARGET | grep -F "$work/" | grep -vxF -e "$work/pool-xfs" -e "$work/pool-btrfs" >"$work/leaked-mounts"; then
    echo "sanity: LEAK: mounts left under $work:" >&2
    cat "$work/leaked-mounts" >&2
    found=1
  fi
  if losetup -l -n -O NAME,BACK-FILE | grep -F "$work/pool-" | grep -vF -e "$work/pool-xfs.img" -e "$work/pool-btrfs.img" >"$work/leaked-loops"; then
    echo "sanity: LEAK: loop devices left on pool images:" >&2
    cat "$work/leaked-loops" >&2
    found=1
  fi
  # A btrfs pool: no subvolume and no qgroup but the top level's may outlive the volumes. A delete
  # does not wait for the kernel's cleaner, which holds a deleted subvolume's qgroup until it has
  # dropped it: wait for it here (Linux 6.x then removes the qgroup itself).
  if [ -d "$work/pool-btrfs/volumes" ]; then
    btrfs subvolume sync "$work/pool-btrfs" >/dev/null
    if btrfs subvolume list -o "$work/pool-btrfs" | grep -E 'path (pool-btrfs/)?(volumes|snapshots)/' >"$work/leaked-subvolumes" ||
      btrfs qgroup show --raw "$work/pool-btrfs" | grep -E '^0/' | grep -v '^0/5 ' >>"$work/leaked-subvolumes"; then
      echo "sanity: LEAK: subvolumes or qgroups left in the btrfs pool:" >&2
      cat "$work/leaked-subvolumes" >&2
      found=1
    fi
  fi
  return $found
}

cleanup() {
  local status=$?
  if [ -n "$driver_pid" ] && kill -0 "$driver_pid" 2>/dev/null; then
    kill -TERM "$driver_pid"
    wait "$driver_pid" 2>/dev/null || true
  fi
  # Whatever a failed run left behind is removed, so the machine stays usable.
  # (grep finds nothing on a clean run; under pipefail that must not fail the script)
  { findmnt -rn -o TARGET | grep -F "$work/" || true; } | sort -r | while read -r m; do umount -l "$m" || true; done
  { losetup -l -n -O NAME,BACK-FILE | grep -F "$work/" || true; } | while read -r dev _; do losetup -d "$dev" || true; done
  if [ "$status" = 0 ] && [ -z "${SANITY_KEEP:-}" ]; then
    rm -rf "$work"
  else
    echo "sanity: FAILED; driver log and reports kept in $work" >&2
  fi
}
trap cleanup EXIT

start_driver() {
  local socket=$1 pool=$2 backend=""
  case $pool in */pool-btrfs) backend=",backend=btrfs-subvolume" ;; esac
  SOKO_DRIVER_JAR=$jar "$repo/driver/bin/soko-driver" \
    --endpoint "unix://$socket" --node-id sanity-node --driver-name csi.soko.dev \
    --pool "name=sanity,path=$pool,capacity=8Gi$backend" \
    --allowed-path-root "$kubelet" --max-volumes-per-node 64 \
    --log-level "${SANITY_LOG_LEVEL:-info}" >>"$work/driver.log" 2>&1 &
  driver_pid=$!
  for _ in $(seq 1 300); do
    [ -S "$socket" ] && return 0
    kill -0 "$driver_pid" 2>/dev/null || { cat "$work/driver.log" >&2; die "the driver exited at start-up"; }
    sleep 0.1
  done
  die "the driver did not open $socket within 30 s"
}

skip_regexp=""
for s in "${SKIPS[@]}"; do
  skip_regexp=${skip_regexp:+$skip_regexp|}$s
done

echo "pool: sanity" >"$work/volume-parameters.yaml"
total_failed=0
for pass in $passes; do
  access=${pass%%:*}
  name=${pass/:/-}
  report=$(suite_pass_report sanity "$access/${pass#*:}")
  socket=$work/csi-$name.sock
  start_driver "$socket" "$(make_pool "${pass#*:}")"
  args=(
    -csi.endpoint "unix://$socket"
    -csi.stagingdir "$kubelet/staging-$name"
    -csi.mountdir "$kubelet/mount-$name"
    -csi.testvolumesize "$volume_size"
    -csi.testvolumeexpandsize "$expand_size"
    -csi.testvolumeaccesstype "$access"
    -csi.testvolumeparameters "$work/volume-parameters.yaml"
    -csi.testnodevolumeattachlimit
    -ginkgo.junit-report "$work/junit-$name.xml"
    -ginkgo.no-color
  )
  [ -n "$skip_regexp" ] && args+=(-ginkgo.skip "$skip_regexp")
  [ -n "${SANITY_FOCUS:-}" ] && args+=(-ginkgo.focus "$SANITY_FOCUS")
  echo "==> csi-sanity, access type ${pass%%:*}, pool ${pass#*:}" >&2
  set +e
  "$sanity" "${args[@]}" >"$work/sanity-$name.log" 2>&1
  rc=$?
  set -e
  kill -TERM "$driver_pid"
  wait "$driver_pid" 2>/dev/null || true
  driver_pid=""
  if [ -f "$work/junit-$name.xml" ]; then
    cp "$work/junit-$name.xml" "$report"
  else
    echo "sanity [$pass]: csi-sanity wrote no JUnit report (see $work/sanity-$name.log)" >&2
    total_failed=1
  fi
  summary=$(grep -E '^(SUCCESS|FAIL)!' "$work/sanity-$name.log" | tail -1 || true)
  ran=$(grep -Eo '^Ran [0-9]+ of [0-9]+ Specs' "$work/sanity-$name.log" | tail -1 || true)
  echo "sanity [$pass]: ${ran:-no summary} -- ${summary:-see $work/sanity-$name.log}"
  # Why each skipped spec was skipped, as csi-sanity reports it (capability not advertised).
  grep -o '<skipped message="[^"]*"' "$work/junit-$name.xml" 2>/dev/null \
    | sed 's/<skipped message="//; s/^skipped - //; s/"$//' | sort | uniq -c | sed 's/^/    skipped: /' || true
  if [ "$rc" != 0 ]; then
    grep -E '^\s*\[FAIL\]' "$work/sanity-$name.log" | sort -u >&2 || true
    total_failed=1
  fi
  leaks || total_failed=1
done

if [ "${#SKIPS[@]}" -gt 0 ]; then
  echo "deliberately skipped (see SKIPS in hack/sanity.sh for the reasons): ${SKIPS[*]}"
fi
[ "$total_failed" = 0 ] || die "csi-sanity reported failures or leaks"
echo "sanity: OK"
