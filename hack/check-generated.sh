#!/usr/bin/env bash
# Fails when the CRD YAML differs from the Java model it is generated from, or a generated block of
# the README or docs/ differs from its source (hack/gen-docs.py), and prints the command that
# regenerates it. Run after a Maven build (which regenerates the CRD). The chart, bundle and
# docs/storagecluster.md generated from the CRD are checked by hack/check-dist.sh, which
# hack/test-dist.sh runs.
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
echo "check-generated: the CRD YAML matches the Java model"
/usr/bin/python3 hack/gen-docs.py --check
echo "check-generated: the README's and docs' generated blocks match their sources"
