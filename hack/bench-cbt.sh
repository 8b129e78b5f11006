#!/usr/bin/env bash
# `make bench`, changed block tracking: GetMetadataDelta through the driver's socket on a 1 GiB and
# a 10 GiB block volume, each filled, snapshotted, 1 % of its 4 KiB blocks rewritten at random and
# snapshotted again (bench/DeltaCost); its time, the driver's CPU and resident memory, and beside it
# what a backup without it reads: the whole snapshot from the disk. Each delta is also asked through
# the controller's relay (bench/RelayHost, a process of its own with the driver's JVM flags), which
# forwards it to the node's data port over mutual TLS on loopback, as in a cluster. The pool is XFS with reflink on
# a direct-I/O loop device, as in hack/bench-data.sh. Prints a Markdown table (docs/benchmarks.md).
# Needs root and 24 GiB free under /var/tmp (the pool is a sparse 40 GiB file: each snapshot reserves
# its volume's size in the pool, and 1 + 10 GiB are written).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
root=$(soko_root)
require_root "the changed block tracking benchmark"
classpath=$(driver_test_classpath)
work=$(mktemp -d /var/tmp/soko-bench-cbt.XXXXXX)
driver_pid=
relay_pid=
cleanup() {
  local pid
  for pid in "$driver_pid" "$relay_pid"; do
    if [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null; then
      wait "$pid" 2>/dev/null || true
    fi
  done
  release_mounts_and_loops "$work/mnt"
  losetup -l -n -O NAME,BACK-FILE | awk -v d="$work/poolfs/" 'index($2, d) == 1 {print $1}' |
    xargs -r -n1 losetup -d 2>/dev/null || true
  release_mounts_and_loops "$work"
  rm -rf "$work"
}
trap cleanup EXIT

say "making a 40 GiB XFS pool (reflink=1) on a direct-I/O loop device"
truncate -s 40G "$work/pool.img"
pool_dev=$(losetup --find --show --direct-io=on "$work/pool.img")
mkfs.xfs -q -m reflink=1 "$pool_dev"
mkdir -p "$work/poolfs" "$work/mnt"
mount "$pool_dev" "$work/poolfs"
mkdir -p "$work/poolfs/soko"

data_endpoint=127.0.0.1:19814
# The relay makes the data path's certificates (the node's and its own) before it serves.
java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:CICompilerCount=1 -Xss512k -Xms8m -Xmx48m \
  -Dio.grpc.netty.shaded.io.netty.allocator.type=unpooled \
  -cp "$classpath" dev.soko.driver.bench.RelayHost "$work/relay.sock" "$work/certs" bench-node \
  "$data_endpoint" >"$work/relay.log" 2>&1 &
relay_pid=$!
wait_for_socket "$work/relay.sock" 60 || { cat "$work/relay.log"; die "the relay did not start"; }

"$root/driver/bin/soko-driver" --endpoint "unix://$work/csi.sock" --node-id bench-node --mode node \
  --pool "name=bench,path=$work/poolfs/soko" --allowed-path-root "$work/mnt" --log-level warn \
  --data-address "$data_endpoint" --data-tls-dir "$work/certs/node" \
  >"$work/driver.log" 2>&1 &
driver_pid=$!
wait_for_socket "$work/csi.sock" 30 || { cat "$work/driver.log"; die "the driver did not start"; }
say "GetMetadataDelta on 1 GiB and 10 GiB block volumes with 1 % of their blocks rewritten"
java -cp "$classpath" dev.soko.driver.bench.DeltaCost "$work/csi.sock" "$work/mnt" "$driver_pid" \
  "$work/poolfs/soko" "$work/relay.sock" "$relay_pid" 1 10 ||
  { tail -40 "$work/driver.log" "$work/relay.log"; die "the benchmark failed"; }
