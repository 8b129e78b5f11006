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

# module_test_classpath MODULE: class path of a module's test classes (demo clients, benchmarks),
# cached next to its build. One reactor run with the modules it depends on, so their classes are
# on it without an install; MODULE runs last, so its class path is what stays in the file. It runs
# to process-test-classes, not test-compile: the crd module finishes its generated CRDs (printer
# column order, release stamp) there, and stopping before would leave them rewritten unfinished.
module_test_classpath() {
  local module=$1 root cp_file
  root=$(soko_root)
  cp_file="$root/$module/target/test-classpath.txt"
  if [ ! -s "$cp_file" ] || [ "$root/$module/pom.xml" -nt "$cp_file" ] \
    || [ ! -d "$root/$module/target/test-classes" ]; then
    (cd "$root" && mvn -B -q -pl "$module" -am process-test-classes dependency:build-classpath \
      -Dmdep.includeScope=test -Dmdep.outputFile="$cp_file" >/dev/null) \
      || die "could not build the $module module's test classes and class path"
  fi
  echo "$root/$module/target/test-classes:$root/$module/target/classes:$(cat "$cp_file")"
}

driver_test_classpath() { module_test_classpath driver; }

# project_version: the root pom.xml's version, which the images and the operator's tests carry.
project_version() { grep -m1 -oP '(?<=<version>)[^<]+' "$(soko_root)/pom.xml"; }

# bench_cluster NODES: the local cluster a benchmark on real nodes measures: a fresh one of NODES
# nodes, stopped again when the script exits, or with BENCH_REUSE_CLUSTER=1 the running one, left
# running. Exports its environment and enters the operator module's folder, from which the tests'
# LocalCluster finds the repository.
bench_cluster() {
  trap bench_cluster_down EXIT
  trap 'exit 130' INT TERM
  if [ "${BENCH_REUSE_CLUSTER:-0}" != 1 ]; then
    SOKO_CLUSTER_NODES=$1 bash "$(soko_root)/hack/local-cluster.sh" up >&2
  fi
  eval "$(bash "$(soko_root)/hack/local-cluster.sh" env)"
  cd "$(soko_root)/operator" || die "no operator module in $(soko_root)"
}

bench_cluster_down() {
  local rc=$?
  if [ "${BENCH_REUSE_CLUSTER:-0}" != 1 ]; then
    bash "$(soko_root)/hack/local-cluster.sh" down >&2 || rc=1
  fi
  exit "$rc"
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

# oci_image_libraries PROGRAM...: oci-image.py's --file arguments for the shared libraries the
# programs link (the dynamic loader included), each at the path the programs look for it.
oci_image_libraries() {
  local lib
  while read -r lib; do
    printf -- '--file\n%s:%s\n' "$(readlink -f "$lib")" "$lib"
  done < <(ldd "$@" | grep -o -E '^\s+/[^ ]+|=> /[^ ]+' | grep -o -E '/[^ ]+' | sort -u)
}

# Where a tier that is not run by Maven writes its JUnit XML, for .ci/run to add up.
test_reports() { echo "$(soko_root)/target/test-reports/$1"; }

# suite_pass_report SUITE PASS: where one pass of a suite writes its JUnit XML,
# target/test-reports/SUITE/PASS.xml (PASS a path such as mount/xfs: CI's tier sanity:mount:xfs).
# It first records the pass as started in that directory's started.txt, so that CI fails a pass
# that started and wrote no report (.ci/JunitTotals.java).
suite_pass_report() {
  local dir
  dir=$(test_reports "$1")
  mkdir -p "$(dirname "$dir/$2")"
  printf '%s.xml\n' "$2" >>"$dir/started.txt"
  echo "$dir/$2.xml"
}

# junit_case FILE NAME [FAILURE]: records one test case, failed when FAILURE (its output) is given,
# in the JUnit XML document FILE, which stays well-formed after every call.
junit_case() {
  local file=$1 name=$2 failure=${3-} suite
  suite=$(basename "$file" .xml)
  mkdir -p "$(dirname "$file")"
  if [ $# -ge 3 ]; then
    printf '  <testcase name="%s"><failure message="failed">%s</failure></testcase>\n' \
      "$(xml_text "$name")" "$(xml_text "$failure")" >>"$file.cases"
  else
    printf '  <testcase name="%s"/>\n' "$(xml_text "$name")" >>"$file.cases"
  fi
  {
    printf '<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="%s">\n' "$suite"
    cat "$file.cases"
    printf '</testsuite>\n'
  } >"$file"
}

# $1 as XML character data: markup escaped, control characters (terminal colours) dropped.
xml_text() {
  local text
  text=$(printf '%s' "$1" | tr -d '\000-\010\013\014\016-\037')
  # Quoted replacements: bash 5.2 reads an unquoted & in one as the matched text.
  text=${text//&/"&amp;"}
  text=${text//</"&lt;"}
  text=${text//>/"&gt;"}
  printf '%s' "${text//\"/"&quot;"}"
}
