#!/usr/bin/env bash
# Tests the Helm chart and the OLM bundle: drift against their sources, helm lint/template over
# helm/soko/ci/*-values.yaml, schema refusals, CSV == chart, operator-verify (hack/test-dist.py).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${SOKO_CACHE:-$HOME/.cache/soko}/bin"
bash "$ROOT/hack/tools.sh" helm operator-verify >/dev/null
drift=0
bash "$ROOT/hack/check-dist.sh" || drift=1
rc=0
/usr/bin/python3 "$ROOT/hack/test-dist.py" --helm "$bin/helm" --operator-verify "$bin/operator-verify" \
  || rc=$?
((drift == 0)) || { echo "FAIL generated files drift from their sources (see above)"; exit 1; }
exit "$rc"
