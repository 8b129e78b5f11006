#!/usr/bin/env bash
# `make bench`, data path: fio (hack/fio/data-path.fio) on an ext4, an xfs and a block volume that
# the driver created, staged and published over its socket, and on the pool's own filesystem on the
# same backing device (the physical limit). Each job runs on every target back to back, so each
# ratio volume/raw is taken side by side. Prints a Markdown table of ratios with the targets of
# issue 11; raw fio JSON stays in the work dir with BENCH_KEEP=1. Needs root and fio.
#
#   BENCH_RUNTIME=5  seconds per timed fio job (at most 10)   BENCH_SIZE=1G  test file per target
set -euo pipefail
source "$(dirname "$0")/lib.sh"
root=$(soko_root)
require_root "the data-path benchmark"
command -v fio >/dev/null || die "fio is missing: run hack/deps.sh"

runtime=${BENCH_RUNTIME:-5}
size=${BENCH_SIZE:-1G}
jobs="$root/hack/fio/data-path.fio"
classpath=$(driver_test_classpath)
work=$(mktemp -d /var/tmp/soko-bench-data.XXXXXX)
driver_pid=
cleanup() {
  if [ -n "$driver_pid" ]; then
    [ -s "$work/volumes" ] && java -cp "$classpath" dev.soko.driver.bench.DataVolumes down \
      "$work/csi.sock" "$work/volumes" >/dev/null 2>&1 || true
    kill -TERM "$driver_pid" 2>/dev/null && wait "$driver_pid" 2>/dev/null || true
  fi
  release_mounts_and_loops "$work"
  [ -n "${BENCH_KEEP:-}" ] && { say "kept $work"; return; }
  rm -rf "$work"
}
trap cleanup EXIT

# The pool's disk: an image file attached with direct I/O, so that the raw side goes to the
# virtio disk rather than to the root filesystem's page cache; else it would not be the limit.
say "making a 6 GiB XFS pool (reflink=1) on a direct-I/O loop device"
truncate -s 6G "$work/pool.img"
pool_dev=$(losetup --find --show --direct-io=on "$work/pool.img")
mkfs.xfs -q -m reflink=1 "$pool_dev"
mkdir -p "$work/poolfs" "$work/mnt" "$work/results"
mount "$pool_dev" "$work/poolfs"
mkdir -p "$work/poolfs/pool" "$work/poolfs/raw"

say "starting the driver and publishing an ext4, an xfs and a block volume"
"$root/driver/bin/soko-driver" --endpoint "unix://$work/csi.sock" --node-id bench-node \
  --mode node --pool "name=bench,path=$work/poolfs/pool,overprovision=2" \
  --allowed-path-root "$work/mnt" --log-level warn >"$work/driver.log" 2>&1 &
driver_pid=$!
wait_for_socket "$work/csi.sock" 60 || { cat "$work/driver.log"; die "the driver did not start"; }
declare -A file=([raw]="$work/poolfs/raw/fio.dat")
while read -r kind target; do
  if [ "$kind" = block ]; then file[$kind]=$target; else file[$kind]=$target/fio.dat; fi
done < <(java -cp "$classpath" dev.soko.driver.bench.DataVolumes up "$work/csi.sock" "$work/mnt" \
  "$work/volumes" $((2 << 30)))
targets=(raw ext4 xfs block)
for t in "${targets[@]}"; do
  [ -n "${file[$t]:-}" ] || { cat "$work/driver.log"; die "volume $t was not published"; }
done
# How each volume's loop device is set up, for the record (direct I/O, logical block size).
for dev in $(losetup -l -n -O NAME,BACK-FILE | awk -v d="$work/poolfs/pool" 'index($2, d) {print $1}'); do
  n=${dev#/dev/}
  printf '%s dio=%s logical_block=%s\n' "$dev" "$(cat /sys/block/"$n"/loop/dio)" \
    "$(cat /sys/block/"$n"/queue/logical_block_size)"
done | sort -u | tee "$work/results/loops.txt"

meminfo() { awk -v k="$1:" '$1 == k {print $2}' /proc/meminfo; } # KiB
cold() { sync; echo 3 >/proc/sys/vm/drop_caches; }
run() { # JOB TARGET
  FILE=${file[$2]} SIZE=$size RUNTIME=$runtime fio --section="$1" --output-format=json \
    --output="$work/results/$1-$2.json" "$jobs" >/dev/null
}

say "laying down $size per target"
for t in "${targets[@]}"; do run fill "$t"; done
for job in randread-qd1 randread-qd32 randwrite-qd1 randwrite-qd32 seqread seqwrite fdatasync; do
  say "fio $job (${runtime} s per target)"
  for t in "${targets[@]}"; do
    cold
    before=$(meminfo Dirty)
    run "$job" "$t"
    # What an application's O_DIRECT writes left dirty in the host's page cache (should be none).
    [ "$job" = randwrite-qd32 ] && echo $(($(meminfo Dirty) - before)) >"$work/results/dirty-$t.kib"
  done
done
say "buffered read of $size from a cold cache: page-cache growth"
for t in "${targets[@]}"; do
  cold
  before=$(meminfo Cached)
  run pagecache "$t"
  echo $(($(meminfo Cached) - before)) >"$work/results/cached-$t.kib"
done
python3 "$root/hack/bench-data-table.py" "$work/results" "${targets[@]}" | tee "$work/table.md"
cp "$work/table.md" "$root/driver/target/bench-data.md"
say "table saved to driver/target/bench-data.md"
