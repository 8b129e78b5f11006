#!/usr/bin/env bash
# Fails when the committed chart/bundle files differ from what their sources generate, and prints
# the command that regenerates them. Generates into a temporary copy; the work tree is not touched.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cp -r "$ROOT/helm" "$ROOT/olm-bundle" "$ROOT/docs" "$tmp/"
bash "$ROOT/hack/gen-dist.sh" --out "$tmp"
if ! diff -ru "$ROOT/helm" "$tmp/helm" || ! diff -ru "$ROOT/olm-bundle" "$tmp/olm-bundle" \
  || ! diff -ru "$ROOT/docs" "$tmp/docs"; then
  echo "check-dist: the chart, the OLM bundle or docs/storagecluster.md is out of date; regenerate and commit:" >&2
  echo "    hack/gen-dist.sh" >&2
  exit 1
fi
echo "check-dist: chart and bundle match their sources"
