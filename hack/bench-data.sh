#!/usr/bin/env bash
# `make bench`, data path: fio (hack/fio/data-path.fio) on an ext4, an xfs and a block volume that
# the driver created, staged and published over its socket, and on the pool's own filesystem on the
# same backing device (the physical limit). Each job runs on every target back to back, so each
# ratio volume/raw is taken side by side. Prints a Markdown table of ratios with the data-path
# targets (docs/benchmarks.md); raw fio JSON stays in the work dir with BENCH_KEEP=1. The same for a btrfs volume of a
# btrfs-subvolume pool (no loop device, a qgroup limit) against its own physical limit, the pool's
# btrfs filesystem on a device of its own; against a btrfs without quotas on a third device (what
# qgroup accounting costs); and against the XFS pool's filesystem (what btrfs costs on this disk).
# Then: space given back by fstrim in a volume, or by deleting in the btrfs volume, snapshot/clone
# times against the data a volume holds (reflink pool, btrfs pool), and the copy speed on a pool
# without reflink against cp --sparse=always. Needs root, fio and btrfs-progs.
#
#   BENCH_RUNTIME=5  seconds per timed fio job (at most 10)   BENCH_SIZE=1G  test file per target
set -euo pipefail
source "$(dirname "$0")/lib.sh"
root=$(soko_root)
require_root "the data-path benchmark"
command -v fio >/dev/null || die "fio is missing: run hack/deps.sh"
command -v mkfs.btrfs >/dev/null || die "btrfs-progs is missing: run hack/deps.sh"

runtime=${BENCH_RUNTIME:-5}
size=${BENCH_SIZE:-1G}
jobs="$root/hack/fio/data-path.fio"
classpath=$(driver_test_classpath)
work=$(mktemp -d /var/tmp/soko-bench-data.XXXXXX)
driver_pid=
cleanup() {
  if [ -n "$driver_pid" ]; then
    if [ -s "$work/volumes" ]; then
      java -cp "$classpath" dev.soko.driver.bench.DataVolumes down \
        "$work/csi.sock" "$work/volumes" >/dev/null 2>&1 || true
    fi
    if kill -TERM "$driver_pid" 2>/dev/null; then
      wait "$driver_pid" 2>/dev/null || true
    fi
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

# A pool's disk: an image file attached with direct I/O, so that the raw side goes to the virtio
# disk rather than to the root filesystem's page cache; else it would not be the limit. The image is
# allocated in full, so no write of a job pays for the host filesystem's allocation.
disk() { # IMAGE: attaches a new 12 GiB image, prints its loop device
  fallocate -l 12G "$1"
  losetup --find --show --direct-io=on "$1"
}
say "making a 12 GiB XFS pool (reflink=1) on a direct-I/O loop device"
pool_dev=$(disk "$work/pool.img")
mkfs.xfs -q -m reflink=1 "$pool_dev"
mkdir -p "$work/poolfs" "$work/btrfs" "$work/btrfs-noquota" "$work/mnt" "$work/results"
mount "$pool_dev" "$work/poolfs"
mkdir -p "$work/poolfs/pool" "$work/poolfs/raw" "$work/plain" # plain: on the root fs, no reflink
# The btrfs-subvolume pool's filesystem, quotas on as that backend needs; and the same filesystem
# with quotas off, which no pool uses: qgroup accounting applies to every write on a filesystem
# that has it, raw ones included, so only a filesystem without it shows what it costs.
say "making two 12 GiB btrfs filesystems, with and without quotas, on direct-I/O loop devices"
for fs in btrfs btrfs-noquota; do
  dev=$(disk "$work/$fs.img")
  mkfs.btrfs -q "$dev" >/dev/null # (-q still prints a note on changed defaults)
  mount "$dev" "$work/$fs"
  mkdir -p "$work/$fs/raw"
  # Written in place, as the driver makes its btrfs volumes: the raw side differs from the volume
  # only by the backend (subvolume, bind mounts, the limit), not by copy-on-write.
  chattr +C "$work/$fs/raw"
done
btrfs quota enable "$work/btrfs"
mkdir -p "$work/btrfs/pool"

say "starting the driver and publishing an ext4, an xfs, a block and a btrfs volume"
"$root/driver/bin/soko-driver" --endpoint "unix://$work/csi.sock" --node-id bench-node \
  --mode node --pool "name=bench,path=$work/poolfs/pool,overprovision=3" \
  --pool "name=plain,path=$work/plain,overprovision=2" \
  --pool "name=subvolumes,path=$work/btrfs/pool,overprovision=3,backend=btrfs-subvolume" \
  --allowed-path-root "$work/mnt" --log-level warn >"$work/driver.log" 2>&1 &
driver_pid=$!
wait_for_socket "$work/csi.sock" 60 || { cat "$work/driver.log"; die "the driver did not start"; }
declare -A file=([raw]="$work/poolfs/raw/fio.dat" [btrfs-raw]="$work/btrfs/raw/fio.dat"
  [btrfs-noquota]="$work/btrfs-noquota/raw/fio.dat")
while read -r kind target; do
  if [ "$kind" = block ]; then file[$kind]=$target; else file[$kind]=$target/fio.dat; fi
done < <(java -cp "$classpath" dev.soko.driver.bench.DataVolumes up "$work/csi.sock" "$work/mnt" \
  "$work/volumes" $((2 << 30)) ext4 xfs block btrfs@subvolumes)
# The XFS pool's volumes beside its filesystem, then the btrfs volume beside its own and beside
# the filesystem without quotas: each ratio's two sides run back to back.
targets=(raw ext4 xfs block btrfs-raw btrfs btrfs-noquota)
for t in "${targets[@]}"; do
  [ -n "${file[$t]:-}" ] || { cat "$work/driver.log"; die "volume $t was not published"; }
done
# How each pool's and volume's loop device is set up, for the record (direct I/O, logical block
# size). The btrfs volume has none: it is a subvolume of the pool's filesystem.
losetup -l -n -O NAME,BACK-FILE | awk -v d="$work/" 'index($2, d) == 1 {print $1, $2}' |
  while read -r dev backing; do
    n=${dev#/dev/}
    printf '%s %s dio=%s logical_block=%s\n' "$dev" "${backing#"$work"/}" \
      "$(cat /sys/block/"$n"/loop/dio)" "$(cat /sys/block/"$n"/queue/logical_block_size)"
  done | sort -u | tee "$work/results/loops.txt"

meminfo() { awk -v k="$1:" '$1 == k {print $2}' /proc/meminfo; } # KiB
cold() { sync; echo 3 >/proc/sys/vm/drop_caches; }
# Copy-on-write keeps an extent whole until every block of it is overwritten, and a qgroup counts
# whole extents: random writes make a btrfs volume hold more than its files' size against its
# limit, and a sequential rewrite gives it back. So the qgroup's referenced bytes are recorded
# after each job (sync first: btrfs accounts qgroups when a transaction commits).
subvolume=$(btrfs inspect-internal rootid "$(dirname "${file[btrfs]}")")
qgroup() { # JOB: appends "JOB referenced limit" of the btrfs volume's qgroup
  sync
  btrfs qgroup show -re --raw "$work/btrfs" |
    awk -v q="0/$subvolume" -v job="$1" '$1 == q {print job, $2, $4}' >>"$work/results/qgroup-btrfs.txt"
}
run() { # JOB TARGET
  FILE=${file[$2]} SIZE=$size RUNTIME=$runtime fio --section="$1" --output-format=json \
    --output="$work/results/$1-$2.json" "$jobs" >/dev/null
}

say "laying down $size per target"
for t in "${targets[@]}"; do run fill "$t"; done
qgroup fill
for job in randread-qd1 randread-qd32 randwrite-qd1 randwrite-qd32 seqread seqwrite fdatasync; do
  say "fio $job (${runtime} s per target)"
  for t in "${targets[@]}"; do
    cold
    before=$(meminfo Dirty)
    run "$job" "$t"
    # What an application's O_DIRECT writes left dirty in the host's page cache (should be none).
    [ "$job" = randwrite-qd32 ] && echo $(($(meminfo Dirty) - before)) >"$work/results/dirty-$t.kib"
    if [ "$t" = btrfs ]; then qgroup "$job"; fi
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
# A btrfs volume has no image and no filesystem of its own: a deleted file's extents go back to the
# pool's filesystem. Counted is the filesystem's used bytes, data and metadata, as `btrfs filesystem
# usage` reports them; btrfs updates them when a transaction commits, which an fsync does not do
# (it writes the log tree) and sync does.
btrfs_used() { sync && btrfs filesystem usage -b "$work/btrfs" | awk '$1 == "Used:" {print $2; exit}'; }
say "discard: write 1 GiB, delete it, sync, in the btrfs volume"
dir=$(dirname "${file[btrfs]}")
rm -f "${file[btrfs]}"
u0=$(btrfs_used)
FILE=$dir/discard.dat SIZE=1G RUNTIME=1 fio --section=fill --output=/dev/null "$jobs"
u1=$(btrfs_used)
rm -f "$dir/discard.dat"
u2=$(btrfs_used)
# shellcheck disable=SC2016 # an awk program: $1... are its fields
discard_row='{m = 1048576; printf "| %s volume | %.0f | %.0f | %.0f | %.0f%% |\n", $1, $2/m, $3/m, $4/m,
  ($3 - $2 > 0 ? 100 * ($3 - $4) / ($3 - $2) : 0)}'
{
  python3 "$root/hack/bench-data-table.py" "$work/results" raw ext4 xfs block
  echo
  echo "btrfs-subvolume pool: btrfs is its volume, btrfs-raw the pool's own filesystem (quotas on),"
  echo "btrfs-noquota the same filesystem without quotas on a device of its own, raw the XFS pool's;"
  echo "the btrfs sides are no-copy-on-write (chattr +C), as the driver makes its volumes."
  echo
  python3 "$root/hack/bench-data-table.py" "$work/results" raw btrfs-noquota btrfs-raw btrfs \
    btrfs/btrfs-raw btrfs/raw btrfs-raw/btrfs-noquota
  echo
  echo "| discard (pool images' allocation, MiB) | before | after writing 1 GiB | after rm + fstrim | given back |"
  echo "|---|---:|---:|---:|---:|"
  awk "$discard_row" "$work/results/discard.txt"
  echo
  echo "| discard (btrfs pool filesystem's used bytes, MiB) | before | after writing 1 GiB | after rm + sync | given back |"
  echo "|---|---:|---:|---:|---:|"
  echo "btrfs $u0 $u1 $u2" | awk "$discard_row"
  echo
  echo "| the btrfs volume's qgroup after each fio job (test file $size) | referenced (MiB) | limit (MiB) |"
  echo "|---|---:|---:|"
  awk '{m = 1048576; printf "| %s | %.0f | %.0f |\n", $1, $2/m, $3/m}' \
    "$work/results/qgroup-btrfs.txt"
} | tee "$work/table.md"
java -cp "$classpath" dev.soko.driver.bench.DataVolumes down "$work/csi.sock" "$work/volumes"
rm -f "$work/volumes"
say "snapshot and clone times with 512 MiB and 4 GiB written (reflink pool, btrfs pool); copies without reflink"
java -cp "$classpath" dev.soko.driver.bench.SnapshotScaling "$work/csi.sock" "$work/mnt" \
  plain "$work/plain" subvolumes >"$work/results/snapshots.tsv"
{
  echo
  awk -F'\t' '{v[$1] = $2}
    END {
      print "| snapshots and clones | 512 MiB written | 4 GiB written | ratio | target | met |"
      print "|---|---:|---:|---:|---|---|"
      for (k = 1; k <= 4; k++) {
        op = k % 2 ? "snapshot" : "clone"
        pool = k <= 2 ? "reflink" : "btrfs"
        key = (k <= 2 ? "" : "btrfs_") op
        a = v[key "_512mib_ms"]; b = v[key "_4gib_ms"]
        printf "| %s on the %s pool (ms) | %.1f | %.1f | %.2f | <= 1.5x | %s |\n", op, pool, a, b,
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
