#!/usr/bin/env bash
# Regenerates the Helm chart's derived files (Chart.yaml, CRDs, RBAC rules, README) and the OLM
# bundle (olm-bundle/manifests, metadata, bundle.Dockerfile) from their sources. See hack/gen-dist.py.
#   hack/gen-dist.sh [--out DIR]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/hack/tools.sh" helm >/dev/null
exec /usr/bin/python3 "$ROOT/hack/gen-dist.py" --helm "${SOKO_CACHE:-$HOME/.cache/soko}/bin/helm" "$@"
