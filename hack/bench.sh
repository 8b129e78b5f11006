#!/usr/bin/env bash
# `make bench`: measures the Soko driver side by side with csi-driver-host-path through the same
# CSI client over a Unix socket, both on one XFS pool (reflink-capable) on a loop device, and prints
# a Markdown table for docs/benchmarks.md; then the Soko driver's same figures on a btrfs-subvolume
# pool beside its image-file ones. Needs root. Rerun it to reproduce that page's numbers.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
root=$(soko_root)
require_root "the benchmark"

jar="$root/driver/target/soko-driver.jar"
[ -f "$jar" ] || die "$jar is missing: run 'make build' first"
# The peer: csi-driver-host-path's hostpathplugin. hack/tools.sh pins it, but the module proxy
# reachable here refuses every version of its module; HOSTPATH_BIN names a binary built some other
# way (docs/benchmarks.md says how the published numbers were made). Without one, Soko runs alone.
hostpath=${HOSTPATH_BIN:-}
if [ -z "$hostpath" ] && bash "$root/hack/tools.sh" hostpathplugin >/dev/null 2>&1; then
  hostpath="$SOKO_CACHE/bin/hostpathplugin"
fi
classpath=$(driver_test_classpath)

work=$(mktemp -d /tmp/soko-bench.XXXXXX)
cleanup() {
  release_mounts_and_loops "$work"
  rm -rf "$work"
}
trap cleanup EXIT

say "making a 6 GiB XFS pool (reflink=1) on a loop device"
truncate -s 6G "$work/pool.img"
mkfs.xfs -q -m reflink=1 "$work/pool.img"
mkdir -p "$work/xfs" "$work/mnt" "$work/results"
mount -o loop "$work/pool.img" "$work/xfs"
mkdir -p "$work/xfs/soko" "$work/xfs/hostpath"
# The same lifecycle on a btrfs-subvolume pool: a subvolume and a qgroup per volume, no image file.
say "making a 6 GiB btrfs with quotas for a btrfs-subvolume pool on a loop device"
truncate -s 6G "$work/btrfs.img"
mkfs.btrfs -q "$work/btrfs.img" >/dev/null
mkdir -p "$work/btrfs"
mount -o loop "$work/btrfs.img" "$work/btrfs"
btrfs quota enable "$work/btrfs"
mkdir -p "$work/btrfs/soko"

run_bench() { # NAME SOCKET FSTYPE -- COMMAND...
  local name=$1 socket=$2 fs_type=$3
  shift 4
  say "benchmarking $name"
  java -Dbench.fsType="$fs_type" -cp "$classpath" dev.soko.driver.bench.CsiBench "$name" "$socket" \
    "$work/mnt" "$work/results/$name.tsv" -- "$@" \
    || { tail -40 "$work/results/$name-driver.log" 2>/dev/null; die "benchmark of $name failed"; }
}

soko_driver() { # NAME: the driver as the node plugin runs it, on its own socket
  echo "$root/driver/bin/soko-driver" --endpoint "unix://$work/$1.sock" --node-id bench-node \
    --mode node --pool "name=bench,path=$work/xfs/$1" --allowed-path-root "$work/mnt" --log-level warn
}
# The class-data archive is trained the way the driver image trains its own (images/driver/
# Containerfile): one start answers the Probe a node's sidecars make first (FirstCall) and is
# stopped by SIGTERM; it records the classes it loads, and the next start of the launcher dumps
# them. The measured run then starts as a node's driver does.
export SOKO_CDS_ARCHIVE="$work/soko-driver.jsa"
say "training the class-data archive as the image does"
mkdir -p "$work/cds-pool"
"$root/driver/bin/soko-driver" --mode node --node-id cds-training \
  --pool "name=training,path=$work/cds-pool" --endpoint "unix://$work/cds-training.sock" \
  >"$work/cds-training.log" 2>&1 &
training=$!
wait_for_socket "$work/cds-training.sock" 10 || true
timeout 10 java -cp "$jar" dev.soko.driver.server.FirstCall "$work/cds-training.sock" \
  || say "the training start did not answer its Probe: the archive lacks the classes of a call"
kill -TERM "$training"
wait "$training" || true
"$root/driver/bin/soko-driver" --help >/dev/null # turns the training's class list into the archive
[ -s "$SOKO_CDS_ARCHIVE" ] || { cat "$work/cds-training.log"; die "no class-data archive was written"; }
# shellcheck disable=SC2046
run_bench soko "$work/soko.sock" ext4 -- $(soko_driver soko)
run_bench soko-btrfs "$work/soko-btrfs.sock" btrfs -- "$root/driver/bin/soko-driver" \
  --endpoint "unix://$work/soko-btrfs.sock" --node-id bench-node --mode node \
  --pool "name=bench,path=$work/btrfs/soko,backend=btrfs-subvolume" \
  --allowed-path-root "$work/mnt" --log-level warn
if [ -n "$hostpath" ]; then
  run_bench hostpath "$work/hostpath.sock" ext4 -- "$hostpath" \
    --endpoint "unix://$work/hostpath.sock" --nodeid bench-node --drivername hostpath.csi.k8s.io \
    --statedir "$work/xfs/hostpath" --v 0
else
  say "no hostpathplugin (the module proxy refuses it; set HOSTPATH_BIN): Soko runs alone"
  sed 's/\t.*/\tnot measured/' "$work/results/soko.tsv" >"$work/results/hostpath.tsv"
fi
# The durability floor: what one journal flush costs on this pool. Soko pays it once per create,
# delete or update before answering (concurrent calls share one); host-path never syncs its state.
say "measuring one durable flush on the pool"
mkdir -p "$work/xfs/flush"
java -cp "$classpath" dev.soko.driver.bench.FlushBench "$work/xfs/flush" >>"$work/results/soko.tsv"
printf 'durable_flush_p50_ms\tnever syncs\n' >>"$work/results/hostpath.tsv"

# Side-by-side table, with Soko's lifecycle targets and whether this run met them: at steady
# state, CreateVolume+DeleteVolume at concurrency 1 within host-path's p50 plus the two durable
# flushes Soko keeps (measured in this run), at concurrency 16 within host-path's p50; the stage
# cycle within host-path's p50. First calls after a start are reported, not targeted.
flush=$(awk -F'\t' '$1 == "durable_flush_p50_ms" {print $2}' "$work/results/soko.tsv")
{
  echo
  echo "| metric | soko | csi-driver-host-path | target for soko | met |"
  echo "|---|---:|---:|---|---|"
  # Both files list the same metrics in the same order (CsiBench writes them).
  paste "$work/results/soko.tsv" "$work/results/hostpath.tsv" | cut -f1,2,4
} | awk -F'\t' -v flush="$flush" '
  BEGIN {
    t["ready_ms"] = "< 1500 ms"; t["idle_rss_mib"] = "< 64 MiB";
    t["create_delete_c1_p50_ms_steady"] = "<= host-path + 2 flushes";
    t["create_delete_c16_p50_ms_steady"] = "<= host-path";
    t["stage_publish_cycle_p50_ms"] = "<= host-path"; t["snapshot_512mib_ms"] = ">= 10x faster";
  }
  function met(metric, soko, peer) {
    if (!(metric in t)) return ""
    if (t[metric] == "< 1500 ms") return soko < 1500 ? "yes" : "NO"
    if (t[metric] == "< 64 MiB") return soko < 64 ? "yes" : "NO"
    if (peer == "not measured") return "no peer"
    if (t[metric] == "<= host-path") return soko <= peer ? "yes" : "NO"
    if (t[metric] == "<= host-path + 2 flushes") {
      bound = peer + 2 * flush
      return sprintf("%s (%.2f ms)", soko <= bound ? "yes" : "NO", bound)
    }
    return soko * 10 <= peer ? sprintf("yes (%.0fx)", peer / soko) : "NO"
  }
  NF == 3 {
    printf "| %s | %s | %s | %s | %s |\n", $1, $2, $3, ($1 in t ? t[$1] : ""), met($1, $2, $3)
    next
  }
  { print }' | tee "$work/table.md"
# The two pool backends side by side, each metric as CsiBench wrote it (no targets: the lifecycle
# targets are against host-path, in the table above).
{
  echo
  echo "| metric (soko) | image-file pool (ext4 volumes on XFS) | btrfs-subvolume pool (btrfs volumes) |"
  echo "|---|---:|---:|"
  awk -F'\t' 'NR == FNR {btrfs[$1] = $2; next}
    $1 in btrfs {printf "| %s | %s | %s |\n", $1, $2, btrfs[$1]}' \
    "$work/results/soko-btrfs.tsv" "$work/results/soko.tsv"
} | tee -a "$work/table.md"
# Idle memory has a target on both pool backends (the table above judges the image-file one only).
for run in soko soko-btrfs; do
  awk -F'\t' -v run="$run" '$1 == "idle_rss_mib" && $2 >= 64 {
    printf "==> idle RSS of %s: %s MiB, above its target (< 64 MiB)\n", run, $2 }' \
    "$work/results/$run.tsv" | tee -a "$work/table.md"
done
cp "$work/table.md" "$root/driver/target/bench-driver.md"
say "table saved to driver/target/bench-driver.md"
