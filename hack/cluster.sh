#!/usr/bin/env bash
# A local Soko cluster to play with: etcd, kube-apiserver (RBAC, loopback, fresh certificates),
# kube-controller-manager, snapshot-controller, the CRDs, a Node object and the operator jar.
# With a StorageCluster file it also applies it and plays its node (driver + CSI sidecars as local
# processes; see hack/e2e/cluster-lib.sh). Runs until Ctrl-C, then removes everything (processes,
# mounts, loop devices, the temp dir). Needs root.
#
#   hack/cluster.sh                      control plane + operator
#   hack/cluster.sh storagecluster.yaml  ... + that StorageCluster and its node processes
#
# Every pool path in the file is used as is on this machine (use a scratch directory).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/e2e/cluster-lib.sh"
require_root "the local cluster"

file=${1:-}
[ -z "$file" ] || [ -f "$file" ] || die "no such file: $file"
trap 'rc=$?; ((rc == 0 || rc == 130)) || E2E_FAILED=1; e2e_cluster_down' EXIT
trap 'exit 130' INT TERM

say "starting the control plane and the operator"
e2e_cluster_up
if [ -n "$file" ]; then
  name=$(kc apply -f "$file" -o jsonpath='{.metadata.name}')
  say "StorageCluster $name applied; waiting for the operator's DaemonSet and Deployment"
  e2e_wait 120 bash -c "[ -n \"\$(kubectl --kubeconfig $E2E_WORK/admin.kubeconfig get storagecluster $name \
    -o jsonpath='{.status.observedGeneration}')\" ]" || die "the operator did not reconcile $name"
  e2e_node_up "$name"
  say "node $E2E_NODE runs the driver and sidecars of $name"
fi
say "ready. In another shell:  export KUBECONFIG=$E2E_WORK/admin.kubeconfig"
echo "    kubectl: $E2E_BIN/kubectl   logs: $E2E_WORK/logs   Ctrl-C stops and cleans up"
# Waiting on a background sleep lets a signal through at once; cleanup stops the sleep too.
sleep infinity &
E2E_PIDS+=("$!:sleep")
wait "$!"
