#!/usr/bin/env bash
# `make bench`, data path: fio (hack/fio/data-path.fio) on an ext4, an xfs and a block volume that
# the driver created, staged and published over its socket, and on the pool's own filesystem on the
# same backing device (the physical limit). Each job runs on every target back to back, so each
# ratio volume/raw is taken side by side. Prints a Markdown table of ratios with the targets of
# issue 11; raw fio JSON stays in the work dir with BENCH_KEEP=1. Then: space given back by fstrim
# in a volume, and snapshot/clone times against the data a volume holds (reflink pool), and the
# copy speed on a pool without reflink against cp --sparse=always. Needs root and fio.
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
  # Volumes first, while the pool is still mounted: a loop device on an image in a pool that was
  # lazily unmounted names its file relative to the lost mount, and no path test finds it then.
  release_mounts_and_loops "$work/mnt"
  losetup -l -n -O NAME,BACK-FILE | awk -v d="$work/poolfs/" 'index($2, d) == 1 {print $1}' |
    xargs -r -n1 losetup -d 2>/dev/null || true
  release_mounts_and_loops "$work"
  [ -n "${BENCH_KEEP:-}" ] && { say "kept $work"; return; }
  rm -rf "$work"
}
trap cleanup EXIT

# The pool's disk: an image file attached with direct I/O, so that the raw side goes to the
# virtio disk rather than to the root filesystem's page cache; else it would not be the limit.
say "making a 12 GiB XFS pool (reflink=1) on a direct-I/O loop device"
truncate -s 12G "$work/pool.img"
pool_dev=$(losetup --find --show --direct-io=on "$work/pool.img")
mkfs.xfs -q -m reflink=1 "$pool_dev"
mkdir -p "$work/poolfs" "$work/mnt" "$work/results"
mount "$pool_dev" "$work/poolfs"
mkdir -p "$work/poolfs/pool" "$work/poolfs/raw" "$work/plain" # plain: on the root fs, no reflink

say "starting the driver and publishing an ext4, an xfs and a block volume"
"$root/driver/bin/soko-driver" --endpoint "unix://$work/csi.sock" --node-id bench-node \
  --mode node --pool "name=bench,path=$work/poolfs/pool,overprovision=3" \
  --pool "name=plain,path=$work/plain,overprovision=2" \
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
  # A block device's own cache counts as Buffers, a file's as Cached: both are page cache.
  before=$(($(meminfo Cached) + $(meminfo Buffers)))
  run pagecache "$t"
  echo $(($(meminfo Cached) + $(meminfo Buffers) - before)) >"$work/results/cached-$t.kib"
done
# Space back: what the pool's images hold (as Pool.allocatedBytes counts it) before and after 1 GiB
# is written in a volume, and after it is deleted and the volume trimmed.
allocated() { du -s -B1 "$work/poolfs/pool/images" | cut -f1; }
say "discard: write 1 GiB, delete it, fstrim, per filesystem volume"
# XFS keeps freed extents busy until its log checkpoint is on disk, and fstrim skips busy ones:
# sync, trim, and trim once more a moment later.
trim() { sync && fstrim "$1" && sleep 1 && sync && fstrim "$1"; }
for t in ext4 xfs; do
  dir=$(dirname "${file[$t]}")
  rm -f "${file[$t]}" && trim "$dir"
  a0=$(allocated)
  FILE=$dir/discard.dat SIZE=1G RUNTIME=1 fio --section=fill --output=/dev/null "$jobs"
  a1=$(allocated)
  rm -f "$dir/discard.dat" && trim "$dir"
  a2=$(allocated)
  echo "$t $a0 $a1 $a2" >>"$work/results/discard.txt"
done
{
  python3 "$root/hack/bench-data-table.py" "$work/results" "${targets[@]}"
  echo
  echo "| discard (pool images' allocation, MiB) | before | after writing 1 GiB | after rm + fstrim | given back |"
  echo "|---|---:|---:|---:|---:|"
  awk '{m = 1048576; printf "| %s volume | %.0f | %.0f | %.0f | %.0f%% |\n", $1, $2/m, $3/m, $4/m,
    ($3 - $2 > 0 ? 100 * ($3 - $4) / ($3 - $2) : 0)}' "$work/results/discard.txt"
} | tee "$work/table.md"
java -cp "$classpath" dev.soko.driver.bench.DataVolumes down "$work/csi.sock" "$work/volumes"
rm -f "$work/volumes"
say "snapshot and clone times with 512 MiB and 4 GiB written; copies without reflink"
java -cp "$classpath" dev.soko.driver.bench.SnapshotScaling "$work/csi.sock" "$work/mnt" \
  plain "$work/plain" >"$work/results/snapshots.tsv"
{
  echo
  awk -F'\t' '{v[$1] = $2}
    END {
      print "| snapshots and clones | 512 MiB written | 4 GiB written | ratio | target | met |"
      print "|---|---:|---:|---:|---|---|"
      for (k = 1; k <= 2; k++) {
        op = k == 1 ? "snapshot" : "clone"
        a = v[op "_512mib_ms"]; b = v[op "_4gib_ms"]
        printf "| %s on the reflink pool (ms) | %.1f | %.1f | %.2f | <= 1.5x | %s |\n", op, a, b,
          b / a, (b <= 1.5 * a ? "yes" : "NO")
      }
      print ""
      print "| copy without reflink (512 MiB written) | MB/s | ratio to cp |"
      print "|---|---:|---:|"
      c = v["plain_copy_cp_sparse_mb_s"]
      printf "| cp --sparse=always | %.0f | 1.00 |\n", c
      printf "| cp --sparse=always + fsync | %.0f | %.2f |\n", v["plain_copy_cp_sparse_fsync_mb_s"],
        v["plain_copy_cp_sparse_fsync_mb_s"] / c
      printf "| driver CreateSnapshot (freeze, cp, fsync) | %.0f | %.2f |\n", v["plain_copy_driver_mb_s"],
        v["plain_copy_driver_mb_s"] / c
    }' "$work/results/snapshots.tsv"
} | tee -a "$work/table.md"
cp "$work/table.md" "$root/driver/target/bench-data.md"
say "table saved to driver/target/bench-data.md"
