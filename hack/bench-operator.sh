#!/usr/bin/env bash
# Operator benchmarks for `make bench`, each printing a Markdown table on stdout:
#   1. OperatorBench: start to first reconcile, RSS idle and after 20 StorageClusters,
#      creation-to-applied, against a real kube-apiserver from `hack/tools.sh kube-api-test`.
#   2. ScaleBench: 10 / 100 / 1,000 simulated nodes (etcd, kube-apiserver with an audit log and
#      the DaemonSet controller of kube-controller-manager, built by hack/tools.sh): change-to-status
#      latency, requests per reconcile and per change, resync duration, RSS, object size, idle load.
#      SCALE_NODES (default "10 100 1000"), SCALE_SAMPLES (changes per kind, default 10) and
#      SCALE_RESYNC (the operator's --resync-interval in seconds, default 30) tune it.
# Both run the shaded jar through its launcher operator/bin/soko-operator (the image's entry point,
# with the measured JVM flags). The Java drivers measure and compute; this script only builds.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
# shellcheck source=versions.env
source "$here/versions.env"
cache=${SOKO_CACHE:-$HOME/.cache/soko}
version=${KUBERNETES_VERSION#v}

"$here/tools.sh" kube-api-test etcd kube-apiserver kube-controller-manager >&2
cd "$root"
cp_file=$(mktemp)
# One reactor run: package the jar, compile the bench, write the operator's test classpath (the
# operator module runs last, so its classpath is what stays in the file).
mvn -B -q -pl operator -am package -DskipTests dependency:build-classpath \
  -Dmdep.outputFile="$cp_file" -Dmdep.includeScope=test >&2
classpath="operator/target/test-classes:operator/target/classes:$(cat "$cp_file")"
rm -f "$cp_file"
SOKO_OPERATOR_JAR="$root/operator/target/soko-operator.jar" \
  java -cp "$classpath" dev.soko.operator.bench.OperatorBench \
  "$root/operator/bin/soko-operator" "$cache/kube-api-test" "$version"
# shellcheck disable=SC2086 # SCALE_NODES is a list of words on purpose
java -Dbench.samples="${SCALE_SAMPLES:-10}" -Dbench.resync="${SCALE_RESYNC:-30}" -cp "$classpath" \
  dev.soko.operator.bench.ScaleBench ${SCALE_NODES:-10 100 1000}
