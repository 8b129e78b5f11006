#!/usr/bin/env bash
# Operator benchmarks for `make bench`: start to first reconcile, RSS idle and after 20
# StorageClusters, creation-to-applied. Runs the shaded jar as users do, against a real
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
mvn -B -q -pl operator -am package -DskipTests >&2
cp_file=$(mktemp)
mvn -B -q -pl operator -am dependency:build-classpath -Dmdep.outputFile="$cp_file" -Dmdep.includeScope=test >&2
classpath="operator/target/test-classes:operator/target/classes:crd/target/classes:$(cat "$cp_file")"
rm -f "$cp_file"
java -cp "$classpath" dev.soko.operator.bench.OperatorBench \
  "$root/operator/target/soko-operator.jar" "$cache/kube-api-test" "$version"
