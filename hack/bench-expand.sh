#!/usr/bin/env bash
# How soon a pod sees its claim grown (`make bench-expand`, docs/benchmarks.md): on the local
# cluster with two nodes (hack/local-cluster.sh) and the chart's default install, 20 online growths
# each of xfs claims and block claims (ext4 too where the node's root holds CAP_SYS_RESOURCE), each
# timed from the PVC's patch to the pod seeing the new size, with the growth handed to the node
# (features.immediateGrowth: true, the default) and with the kubelet's path forced (false), in the
# same run. dev.soko.e2e.ExpandBench measures and prints the table; this script only builds, starts
# and stops. Needs root, the images (make images) and the node's tools (make tools-node).
#
# Environment: BENCH_MODES (default "xfs block ext4"), BENCH_GROWTHS (claims grown per mode and
# path, default 20), BENCH_REUSE_CLUSTER=1 (measure on the running local cluster and leave it
# running, instead of starting a fresh one and stopping it).
set -euo pipefail
SOKO_LOG_TAG=bench-expand
source "$(dirname "$0")/lib.sh"
require_root "the expansion benchmark"
classpath=$(module_test_classpath operator)
version=$(project_version)
bench_cluster 2
# shellcheck disable=SC2086 # BENCH_MODES is a list of words on purpose
java -Dsoko.version="$version" -Dbench.growths="${BENCH_GROWTHS:-20}" -cp "$classpath" \
  dev.soko.e2e.ExpandBench ${BENCH_MODES:-xfs block ext4}
