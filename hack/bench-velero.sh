#!/usr/bin/env bash
# What Velero's CSI snapshot data mover costs with Soko (`make bench-velero`, docs/benchmarks.md):
# on the local cluster with two nodes (hack/local-cluster.sh) and Velero with its MinIO store
# (hack/velero.sh, started and removed by the benchmark), a 1 GiB claim holding 512 MiB of random
# data backed up, backed up again after 16 MiB of random 4 KiB writes, and restored onto the other
# node, beside a plain copy of the same bytes (dev.soko.e2e.VeleroBench measures and prints the
# table; this script only builds, starts and stops). Needs root, the images (make images), the
# node's tools (make tools-node) and the backup tier's (make tools-backup).
#
# Environment: BENCH_MODES (default "filesystem block"), BENCH_REUSE_CLUSTER=1 (measure on the
# running local cluster and leave it running, instead of starting a fresh one and stopping it).
set -euo pipefail
SOKO_LOG_TAG=bench-velero
source "$(dirname "$0")/lib.sh"
require_root "the Velero benchmark"
classpath=$(module_test_classpath operator)
version=$(project_version)
bench_cluster 2
# shellcheck disable=SC2086 # BENCH_MODES is a list of words on purpose
java -Dsoko.version="$version" -cp "$classpath" dev.soko.e2e.VeleroBench ${BENCH_MODES:-filesystem block}
