#!/usr/bin/env bash
# The control-plane demo (make demo-control-plane): builds the operator's test classes and runs
# dev.soko.e2e.ControlPlaneDemo, which starts a control plane, the operator and a node played by
# the driver and the CSI sidecars as processes, and walks one volume's life through Kubernetes
# objects. Needs root (a tmpfs, loop devices) and the jars and tools of `make build tools-e2e`.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
require_root "the control-plane demo"
ROOT=$(soko_root)
classpath=$(module_test_classpath operator)
cd "$ROOT"
exec java -cp "$classpath" dev.soko.e2e.ControlPlaneDemo
