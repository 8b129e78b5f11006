#!/usr/bin/env bash
# Provisioning at scale (`make bench-provision`, docs/benchmarks.md): on the local cluster
# (hack/local-cluster.sh, 3 nodes by default: a node runs at most 110 pods), N claims each with a pod
# that mounts it, created at once, on Soko's WaitForFirstConsumer class and on local-path-provisioner's
# (pinned in hack/versions.env, run as a process on the host against the cluster's API server, its
# volumes on the same pool filesystems); then Soko's deletion until the pools are empty again. The
# Java driver (dev.soko.e2e.ProvisionBench) measures and prints the tables; this script only builds,
# starts and stops. Needs root, the images (make images) and the node's tools (make tools-node).
#
# Environment: BENCH_CLAIMS (claim counts, default "100 300"), BENCH_RUNS (default 1),
# BENCH_PROVISIONERS (default "soko,local-path"),
# SOKO_CLUSTER_NODES (default 3), SOKO_CLUSTER_CONTROLLER_QPS (kube-controller-manager's API rate,
# whose PV controller binds every claim; default Kubernetes' 20), BENCH_REUSE_CLUSTER=1 (measure on the running local cluster and
# leave it running, instead of starting a fresh one and stopping it).
set -euo pipefail
SOKO_LOG_TAG=bench-provision
source "$(dirname "$0")/lib.sh"
require_root "the provisioning benchmark"
ROOT=$(soko_root)
BIN=${SOKO_CACHE:-$HOME/.cache/soko}/bin
cluster=$ROOT/hack/local-cluster.sh
# local-path-provisioner runs with its own defaults except what it needs here: where its volumes go
# (the pool filesystem the local cluster mounts on every node, where Soko's pool lives too), its
# config and the template of its per-volume pods as files (it runs outside the cluster), and the
# node's busybox image.
LOCAL_PATH_NAMESPACE=local-path-storage
LOCAL_PATH_DIR=/var/lib/soko/local-path

"$ROOT/hack/tools.sh" local-path-provisioner >&2
classpath=$(module_test_classpath operator)
version=$(grep -m1 -oP '(?<=<version>)[^<]+' "$ROOT/pom.xml")

local_path_pid=""
finish() {
  local rc=$?
  if [ -n "$local_path_pid" ]; then kill "$local_path_pid" 2>/dev/null || true; fi
  if [ "${BENCH_REUSE_CLUSTER:-0}" != 1 ]; then bash "$cluster" down >&2 || rc=1; fi
  exit "$rc"
}
trap finish EXIT
trap 'exit 130' INT TERM

if [ "${BENCH_REUSE_CLUSTER:-0}" != 1 ]; then
  SOKO_CLUSTER_NODES=${SOKO_CLUSTER_NODES:-3} bash "$cluster" up >&2
fi
eval "$(bash "$cluster" env)"
image=$SOKO_CLUSTER_IMAGE_REGISTRY/busybox:1

# What local-path-provisioner needs in the cluster: its namespace, where its per-volume pods (hostPath
# volumes) run, so at the privileged Pod Security level; the service account they run as; the
# setup and teardown scripts they mount from its ConfigMap; and its StorageClass.
"$BIN/kubectl" apply -f - >&2 <<MANIFESTS
apiVersion: v1
kind: Namespace
metadata:
  name: $LOCAL_PATH_NAMESPACE
  labels: {pod-security.kubernetes.io/enforce: privileged}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: local-path-provisioner-service-account, namespace: $LOCAL_PATH_NAMESPACE}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: local-path-config, namespace: $LOCAL_PATH_NAMESPACE}
data:
  setup: |
    set -eu
    mkdir -m 0777 -p "\$VOL_DIR"
  teardown: |
    set -eu
    rm -rf "\$VOL_DIR"
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local-path}
provisioner: rancher.io/local-path
volumeBindingMode: WaitForFirstConsumer
reclaimPolicy: Delete
MANIFESTS
state=$SOKO_CLUSTER_DIR/local-path
mkdir -p "$state"
printf '{"nodePathMap": [{"node": "DEFAULT_PATH_FOR_NON_LISTED_NODES", "paths": ["%s"]}]}\n' \
  "$LOCAL_PATH_DIR" >"$state/config.json"
# The per-volume pod's template: v0.0.30 takes the image from it, not from its image flag.
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: volume-setup}\nspec:\n  containers:\n  - {name: volume-setup, image: "%s", imagePullPolicy: IfNotPresent}\n' \
  "$image" >"$state/volume-pod.yaml"
"$BIN/local-path-provisioner" start --kubeconfig "$KUBECONFIG" --config "$state/config.json" \
  --helper-pod-file "$state/volume-pod.yaml" --helper-image "$image" \
  --namespace "$LOCAL_PATH_NAMESPACE" >"$SOKO_CLUSTER_DIR/logs/local-path-provisioner.log" 2>&1 &
local_path_pid=$!

cd "$ROOT/operator" # LocalCluster finds the repository from the module's folder
# shellcheck disable=SC2086 # BENCH_CLAIMS is a list of words on purpose
java -Dsoko.version="$version" -Dbench.runs="${BENCH_RUNS:-1}" \
  -Dbench.provisioners="${BENCH_PROVISIONERS:-soko,local-path}" -cp "$classpath" \
  dev.soko.e2e.ProvisionBench ${BENCH_CLAIMS:-100 300}
