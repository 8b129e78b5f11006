# shellcheck shell=bash
# Shared shell helpers for hack/*.sh. Source it; it defines functions only.

# Absolute path of the repository root.
soko_root() { cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd; }

# The name under which the local cluster's nodes import Soko's and the cluster's own images; the
# StorageCluster, the chart and the OLM bundle point their image registry at it, as an air-gapped
# cluster points them at its own registry.
cluster_registry() { echo soko.local; }

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }

# A message on stderr, and a fatal one; tagged "[TAG] " when the script sets SOKO_LOG_TAG.
log() { printf '%s%s\n' "${SOKO_LOG_TAG:+[$SOKO_LOG_TAG] }" "$*" >&2; }
die() { printf '%serror: %s\n' "${SOKO_LOG_TAG:+[$SOKO_LOG_TAG] }" "$*" >&2; exit 1; }

require_root() {
  [ "$(id -u)" = 0 ] || die "$1 needs root (loop devices and mounts)"
}

# Class path of the driver's test classes (CSI client, demo, benchmark), cached next to the build.
# One reactor run with the modules the driver depends on (driver-cli), so their classes are on it
# without an install; the driver module runs last, so its class path is what stays in the file.
driver_test_classpath() {
  local root cp_file
  root=$(soko_root)
  cp_file="$root/driver/target/test-classpath.txt"
  if [ ! -s "$cp_file" ] || [ "$root/driver/pom.xml" -nt "$cp_file" ] \
    || [ ! -d "$root/driver/target/test-classes" ]; then
    (cd "$root" && mvn -B -q -pl driver -am test-compile dependency:build-classpath \
      -Dmdep.includeScope=test -Dmdep.outputFile="$cp_file" >/dev/null) \
      || die "could not build the driver's test classes and class path"
  fi
  echo "$root/driver/target/test-classes:$root/driver/target/classes:$(cat "$cp_file")"
}

# Unmounts everything below $1 (deepest first) and detaches loop devices whose image lies below it.
release_mounts_and_loops() {
  local dir=$1 mnt dev
  while read -r mnt; do
    umount -l "$mnt" 2>/dev/null || true
  done < <(awk -v d="$dir" '$2 ~ "^"d {print $2}' /proc/self/mounts | sort -r)
  while read -r dev; do
    if [ -n "$dev" ]; then losetup -d "$dev" 2>/dev/null || true; fi
  done < <(losetup -l -n -O NAME,BACK-FILE 2>/dev/null | awk -v d="$dir" 'index($2, d) == 1 {print $1}')
}

# Polls "$@" every 0.2 s for up to $1 seconds (its output discarded); fails when time runs out.
wait_until() {
  local seconds=$1 deadline
  shift
  deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 0.2
  done
}

# Waits until the socket file $1 exists, up to $2 seconds.
wait_for_socket() { wait_until "$2" test -S "$1"; }

# show ARGS...: prints `kubectl ARGS` as typed and its output indented, for a demo's reader. The
# script defines kc, the kubectl of its cluster.
show() {
  printf '    $ kubectl %s\n' "$*"
  kc "$@" 2>&1 | sed 's/^/      /'
}
