#!/usr/bin/env bash
# Tests the Helm chart and the OLM bundle: drift against their sources, helm lint/template over
# helm/soko/ci/*-values.yaml, schema refusals, CSV == chart, operator-verify (hack/test-dist.py).
# JUnit XML goes to target/test-reports/dist.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
ROOT=$(soko_root)
bin="${SOKO_CACHE:-$HOME/.cache/soko}/bin"
reports=$(test_reports dist)
rm -rf "$reports"
bash "$ROOT/hack/tools.sh" helm operator-verify >/dev/null
drift=0
drift_case="the chart and the bundle are what hack/gen-dist.sh makes of their sources"
if out=$(bash "$ROOT/hack/check-dist.sh" 2>&1); then
  junit_case "$reports/drift.xml" "$drift_case"
else
  drift=1
  printf '%s\n' "$out"
  junit_case "$reports/drift.xml" "$drift_case" "$out"
fi
rc=0
/usr/bin/python3 "$ROOT/hack/test-dist.py" --helm "$bin/helm" --operator-verify "$bin/operator-verify" \
  --junit "$reports/dist.xml" || rc=$?
((drift == 0)) || { echo "FAIL generated files drift from their sources (see above)"; exit 1; }
exit "$rc"
