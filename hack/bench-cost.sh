#!/usr/bin/env bash
# What a CreateVolume+DeleteVolume pair costs each driver in CPU time (user + system of the driver
# process, per pair, at concurrency 1 and 16, steady state), measured in turns round after round so
# that drivers share whatever load the machine has (LifecycleCost prints the least and the median).
# On a shared machine this moves far less with load than the latency rows of hack/bench.sh. Root.
#
#   hack/bench-cost.sh [PAIRS [ROUNDS]] [NAME=JAR ...]    default: soko=driver/target/soko-driver.jar
#   HOSTPATH_BIN=/path/to/hostpathplugin hack/bench-cost.sh 2000 5 before=/tmp/a.jar after=/tmp/b.jar
#
# COST_THREADS=true splits the CPU time by thread kind (RPC threads, event loop, JIT, GC). COST_START
# and COST_STOP are commands run around each measured phase ({name}, {pid}, {phase} replaced), e.g.
# COST_START='strace -f -c -o /tmp/{name}-{phase}.txt -p {pid}' to count syscalls (CPU figures are
# then not CPU figures), or 'jcmd {pid} JFR.start ...' with COST_STOP='jcmd {pid} JFR.stop ...'.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
root=$(soko_root)
require_root "the cost benchmark"
pairs=${1:-2000}
rounds=${2:-5}
shift $(($# < 2 ? $# : 2))
drivers=("$@")
[ ${#drivers[@]} -gt 0 ] || drivers=("soko=$root/driver/target/soko-driver.jar")
[ -n "${HOSTPATH_BIN:-}" ] && drivers+=("hostpath=$HOSTPATH_BIN")
classpath=$(driver_test_classpath)

work=$(mktemp -d /tmp/soko-cost.XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  release_mounts_and_loops "$work"
  rm -rf "$work"
}
trap cleanup EXIT

say "making a 6 GiB XFS pool (reflink=1) on a loop device, as hack/bench.sh does"
truncate -s 6G "$work/pool.img"
mkfs.xfs -q -m reflink=1 "$work/pool.img"
mkdir -p "$work/xfs" "$work/mnt"
mount -o loop "$work/pool.img" "$work/xfs"
export SOKO_CDS_ARCHIVE="" # steady state is measured; the archive only speeds the start
specs=()
for driver in "${drivers[@]}"; do
  name=${driver%%=*} binary=${driver#*=}
  mkdir -p "$work/xfs/$name"
  if [ "$name" = hostpath ]; then
    "$binary" --endpoint "unix://$work/$name.sock" --nodeid bench-node \
      --drivername hostpath.csi.k8s.io --statedir "$work/xfs/$name" --v 0 >"$work/$name.log" 2>&1 &
  else
    SOKO_DRIVER_JAR=$binary "$root/driver/bin/soko-driver" --endpoint "unix://$work/$name.sock" \
      --node-id bench-node --mode node --pool "name=bench,path=$work/xfs/$name" \
      --allowed-path-root "$work/mnt" --log-level warn >"$work/$name.log" 2>&1 &
  fi
  pids+=($!)
  specs+=("$name=$!=$work/$name.sock")
done
java "-Dcost.threads=${COST_THREADS:-false}" "-Dcost.start=${COST_START:-}" "-Dcost.stop=${COST_STOP:-}" \
  -cp "$classpath" dev.soko.driver.bench.LifecycleCost "$pairs" "$rounds" "${specs[@]}"
