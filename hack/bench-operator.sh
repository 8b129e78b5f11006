#!/usr/bin/env bash
# Operator benchmarks for `make bench`: start to first reconcile, RSS idle and after 20
# StorageClusters, creation-to-applied. Runs the shaded jar through its launcher
# operator/bin/soko-operator (the image's entry point, with the measured JVM flags), against a real
# kube-apiserver from `hack/tools.sh kube-api-test`. Prints a Markdown table on stdout.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
# shellcheck source=versions.env
source "$here/versions.env"
cache=${SOKO_CACHE:-$HOME/.cache/soko}
version=${KUBERNETES_VERSION#v}

"$here/tools.sh" kube-api-test >&2
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
