#!/usr/bin/env bash
# What a restore on another node costs: a 1 GiB block volume holding 512 MiB, snapshotted on one
# XFS pool, copied into a second XFS pool over the node-to-node data path (a real node-mode driver's
# mutual-TLS data port on loopback, the client a restore uses) beside a plain `cp --sparse` of the
# same image (bench/RestoreCost). Each pool is its own filesystem on a direct-I/O loop device, as
# two nodes' pools are. Needs root and `make build`.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
root=$(soko_root)
require_root "the cross-node restore benchmark"
classpath=$(driver_test_classpath)
work=$(mktemp -d /var/tmp/soko-bench-restore.XXXXXX)
cleanup() {
  release_mounts_and_loops "$work"
  rm -rf "$work"
}
trap cleanup EXIT

for pool in a b; do
  truncate -s 4G "$work/$pool.img"
  dev=$(losetup --find --show --direct-io=on "$work/$pool.img")
  mkfs.xfs -q -m reflink=1 "$dev"
  mkdir -p "$work/$pool"
  mount "$dev" "$work/$pool"
  mkdir -p "$work/$pool/soko"
done
say "copying a snapshot holding 512 MiB into another pool: over the data path, and with cp"
# The copying side stands for the restoring node's driver: the JVM flags of driver/bin/soko-driver
# that change its speed (C1 only, its heap, Netty's unpooled buffers as Main sets them).
java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xms8m -Xmx48m \
  -Dio.grpc.netty.shaded.io.netty.allocator.type=unpooled \
  -cp "$classpath" dev.soko.driver.bench.RestoreCost "$work" "$root/driver/bin/soko-driver" \
  "$work/a/soko" "$work/b" 512 || { tail -40 "$work/driver.log"; die "the benchmark failed"; }
