#!/usr/bin/env bash
# `make bench`, btrfs qgroup limit: what a btrfs-subvolume volume's capacity limit costs 4 KiB random
# writes at queue depth 32, against the room left under the limit, and how much of a ratio is where
# a file lands on the disk. Per row a fresh btrfs with quotas on (a fully allocated direct-I/O loop
# device, as hack/bench-data.sh makes it): a no-copy-on-write directory of the top level (the
# filesystem's own speed), a subvolume without a limit, and a subvolume whose qgroup limit leaves
# ROOM above a 1 GiB test file. Rounds rotate the order of the three. Prints a Markdown table of IOPS
# ratios against the directory, and each round's IOPS on stderr.
#
#   BENCH_ROOMS="3G 1G 76M"   BENCH_ROUNDS=3   BENCH_RUNTIME=5 (seconds per fio job)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
require_root "the btrfs qgroup benchmark (loop devices, mounts)"
command -v fio >/dev/null || die "fio is missing: run hack/deps.sh"
rooms=${BENCH_ROOMS:-3G 1G 76M}
rounds=${BENCH_ROUNDS:-3}
runtime=${BENCH_RUNTIME:-5}
work=$(mktemp -d /var/tmp/soko-bench-qgroup.XXXXXX)
trap 'release_mounts_and_loops "$work"; rm -rf "$work"' EXIT

fill() { # FILE
  fio --name=fill --filename="$1" --size=1G --rw=write --bs=1M --iodepth=8 --direct=1 \
    --ioengine=libaio --end_fsync=1 --output=/dev/null
}
randwrite_iops() { # FILE
  fio --name=randwrite --filename="$1" --size=1G --rw=randwrite --bs=4k --iodepth=32 --direct=1 \
    --ioengine=libaio --randrepeat=0 --time_based --ramp_time=1 --runtime="$runtime" \
    --output-format=json | python3 -c 'import json, sys; print(json.load(sys.stdin)["jobs"][0]["write"]["iops"])'
}
ratio() { python3 -c "import sys; print(f'{float(sys.argv[1]) / float(sys.argv[2]):.2f}')" "$1" "$2"; }

# measure ROOM: one fresh filesystem; prints "limited-ratios unlimited-ratios" for the rounds.
measure() {
  local room=$1 dir=$work/$1 dev mnt round target limited="" unlimited=""
  local -A file iops
  mkdir -p "$dir"
  fallocate -l 12G "$dir/disk.img"
  dev=$(losetup -f --show --direct-io=on "$dir/disk.img")
  mkfs.btrfs -q "$dev" >/dev/null
  mnt=$dir/mnt
  mkdir -p "$mnt" && mount "$dev" "$mnt"
  btrfs quota enable "$mnt"
  mkdir "$mnt/raw"
  btrfs subvolume create "$mnt/unlimited" >/dev/null
  btrfs subvolume create "$mnt/limited" >/dev/null
  chattr +C "$mnt/raw" "$mnt/unlimited" "$mnt/limited" # in place, as the driver makes its volumes
  btrfs qgroup limit "$(($(numfmt --from=iec 1G) + $(numfmt --from=iec "$room")))" "$mnt/limited"
  file=([raw]=$mnt/raw/fio.dat [unlimited]=$mnt/unlimited/fio.dat [limited]=$mnt/limited/fio.dat)
  for target in raw unlimited limited; do fill "${file[$target]}"; done
  sync
  local order=(raw unlimited limited)
  for ((round = 0; round < rounds; round++)); do
    for target in "${order[@]}"; do iops[$target]=$(randwrite_iops "${file[$target]}"); done
    echo "round $round: raw ${iops[raw]} unlimited ${iops[unlimited]} limited ${iops[limited]}" >&2
    limited+="${limited:+ · }$(ratio "${iops[limited]}" "${iops[raw]}")"
    unlimited+="${unlimited:+ · }$(ratio "${iops[unlimited]}" "${iops[raw]}")"
    order=("${order[@]:1}" "${order[0]}")
  done
  umount "$mnt"
  losetup -d "$dev"
  rm -f "$dir/disk.img"
  echo "| $room | $limited | $unlimited |"
}

say "btrfs: 4 KiB random writes QD32 under a qgroup limit, $rounds rounds of ${runtime} s per target" >&2
echo "| room under the limit above the 1 GiB file | limited subvolume / top-level directory, IOPS | unlimited subvolume / top-level directory |"
echo "|---|---|---|"
for room in $rooms; do measure "$room"; done
