#!/usr/bin/env bash
# The driver demo: starts the driver jar on a temporary pool and walks one volume through
# create -> stage -> publish -> write -> snapshot -> restore -> verify -> expand -> clean up,
# printing each step and its duration. Needs root (loop devices, mounts).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
root=$(soko_root)
require_root "the demo"

jar="$root/driver/target/soko-driver.jar"
[ -f "$jar" ] || die "$jar is missing: run 'make build' first"
classpath=$(driver_test_classpath)

work=$(mktemp -d /tmp/soko-demo.XXXXXX)
driver_pid=""
cleanup() {
  # Every step may fail (the driver already gone, nothing mounted): none may stop the rest.
  if [ -n "$driver_pid" ]; then
    kill "$driver_pid" 2>/dev/null || true
    wait "$driver_pid" 2>/dev/null || true
  fi
  release_mounts_and_loops "$work"
  rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/pool" "$work/mnt"
socket="$work/csi.sock"
say "starting the driver on a 2 GiB pool in $work/pool"
start=$(date +%s%N)
"$root/driver/bin/soko-driver" \
  --endpoint "unix://$socket" --node-id demo-node --mode node \
  --pool "name=default,path=$work/pool,capacity=2Gi" \
  --allowed-path-root "$work/mnt" >"$work/driver.log" 2>&1 &
driver_pid=$!
wait_for_socket "$socket" 30 || { cat "$work/driver.log"; die "the driver did not open its socket"; }
say "driver listening after $(( ($(date +%s%N) - start) / 1000000 )) ms (pid $driver_pid)"

java -cp "$classpath" dev.soko.driver.client.Demo "unix://$socket" "$work/mnt" \
  || { echo "--- driver log"; cat "$work/driver.log"; die "the demo failed"; }
say "demo complete; the driver's log was $(wc -l <"$work/driver.log") lines"
