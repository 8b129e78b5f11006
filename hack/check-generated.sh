#!/usr/bin/env bash
# Fails when a generated file differs from what its source generates, and prints the command that
# regenerates it. Run after a Maven build (which regenerates the CRD YAML from the Java model).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if ! git diff --quiet -- crd/src/generated; then
  git --no-pager diff --stat -- crd/src/generated
  echo "check-generated: the CRD YAML differs from the Java model; regenerate and commit:" >&2
  echo "    mvn -pl crd package -DskipTests && hack/gen-dist.sh" >&2
  exit 1
fi
untracked=$(git ls-files --others --exclude-standard -- crd/src/generated)
if [ -n "$untracked" ]; then
  echo "check-generated: generated files are not committed: $untracked" >&2
  exit 1
fi
bash hack/check-dist.sh
