#!/usr/bin/env bash
# The end-to-end tier on real nodes: starts the local cluster with two nodes (hack/local-cluster.sh:
# control plane, and on each node a kubelet and containerd with the images imported), runs the Java *E2E tests against it (operator
# module, Failsafe execution "e2e", JUnit reports in operator/target/e2e-reports, failure reports
# with every component's logs in operator/target/e2e-report), and stops the cluster again, checking
# that nothing is left. Needs root, the images (make images) and the node's tools (make tools-node).
# E2E_TEST=ClassName[#method] runs chosen tests (Failsafe's it.test); .ci/run refuses it.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
require_root "the end-to-end tier on a real node"
ROOT=$(soko_root)
cluster=$ROOT/hack/local-cluster.sh

# The upgrade tier starts from the newest release, built from its commit (cached).
# Its images are imported beside the working tree's, also when a test restarts a node.
SOKO_PREVIOUS_RELEASE=$(bash "$ROOT/hack/previous-release.sh")
export SOKO_PREVIOUS_RELEASE SOKO_CLUSTER_EXTRA_IMAGES=$SOKO_PREVIOUS_RELEASE
# The OLM tier installs from a catalog of that release's bundle and this tree's.
SOKO_OLM_CATALOG=$(bash "$ROOT/hack/olm-catalog.sh" "$SOKO_PREVIOUS_RELEASE")
export SOKO_OLM_CATALOG
trap 'bash "$cluster" down' EXIT
SOKO_CLUSTER_NODES=${SOKO_CLUSTER_NODES:-2} bash "$cluster" up
eval "$(bash "$cluster" env)"
cd "$ROOT"
rm -rf operator/target/e2e-report operator/target/e2e-reports
# Only the e2e execution: the unit tests and *IT ran in `mvn verify` before this tier.
mvn -B -pl operator -am verify -De2e.skip=false -DskipITs=true -Dtest=none \
  -Dsurefire.failIfNoSpecifiedTests=false ${E2E_TEST:+-Dit.test="$E2E_TEST"}
