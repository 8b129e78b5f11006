#!/usr/bin/env bash
# End-to-end test: a local control plane (etcd, kube-apiserver with RBAC, kube-controller-manager,
# snapshot-controller), the operator jar, and "the node" played by local processes — the driver in
# node and controller mode and the real external-provisioner, csi-snapshotter and csi-resizer, run
# with the args the operator put in its DaemonSet and Deployment and under the ServiceAccounts it
# made. A StorageCluster is applied; a PVC is provisioned, expanded, snapshotted and restored;
# everything is deleted again. Each check names what it asserts. Exits non-zero on any failure;
# the last line is "N passed, M failed". Needs root (the driver makes loop devices).
#
# Not exercised (no kubelet here): kubelet plugin registration and liveness probes (the driver's
# built-in ones, or node-driver-registrar and livenessprobe with registration Sidecars),
# NodeStage/Publish and NodeExpandVolume. After the resize the test checks what the resizer sets
# (PV capacity and the PVC's FileSystemResizePending condition); the file system growth is the
# kubelet's part.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/e2e/cluster-lib.sh"
require_root "the end-to-end test"

TIMEOUT=${E2E_TIMEOUT:-90}
CLUSTER=e2e
NS=soko-e2e
DRIVER=e2e.csi.soko.dev
CLASS=soko-e2e
SNAPCLASS=e2e-snapshots
APP_NS=e2e-app
passed=0 failed=0

# check NAME COMMAND...: runs COMMAND, counts and prints the result.
check() {
  local name=$1 started=$SECONDS
  shift
  if "$@"; then
    passed=$((passed + 1))
    printf '  ok   %-70s %3ds\n' "$name" $((SECONDS - started))
  else
    failed=$((failed + 1))
    printf '  FAIL %-70s %3ds\n' "$name" $((SECONDS - started))
  fi
}
# waitfor NAME COMMAND...: like check, but polls COMMAND until it succeeds or TIMEOUT passes.
waitfor() {
  local name=$1
  shift
  check "$name" wait_until "$TIMEOUT" "$@"
}

finish() {
  local rc=$?
  ((failed > 0 || rc != 0)) && E2E_FAILED=1
  if [ "$E2E_FAILED" = 1 ] && [ -n "${E2E_WORK:-}" ]; then
    kc get storagecluster,pv -o wide 2>/dev/null || true
    kc get pvc,volumesnapshot,volumesnapshotcontent,csistoragecapacity -A 2>/dev/null || true
    if kc get storagecluster "$CLUSTER" -o jsonpath='{.status}' 2>/dev/null; then echo; fi
    kc get events -A --sort-by=.lastTimestamp 2>/dev/null | tail -20 || true
  fi
  e2e_cluster_down
  if ((rc != 0 && failed == 0)); then failed=1; fi
  echo "$passed passed, $failed failed"
  ((failed == 0))
}
trap finish EXIT
trap 'exit 130' INT TERM

# Later steps build on earlier ones: after a failed section, stop instead of timing out on each.
section_ok() { ((failed == 0)) || exit 1; }
# status_has_pool_capacity SC: the StorageCluster's status lists a pool with a known capacity.
status_has_pool_capacity() { field storagecluster "$1" '{.status.pools[*].total}' | grep -q '[0-9]'; }
# The default (allowRootFilesystem false) is what runs here: the pool is a mount of its own.
pool_accepted() {
  printf '%s\n' "${E2E_DRIVER_ARGS[@]}" | grep -q '^--kubelet-dir=' &&
    ! grep -Eq 'pool [a-z0-9-]+ refused' "$E2E_WORK/logs/driver-node.log"
}
# columns_are KIND NAME HEADER...: `kubectl get KIND NAME` prints exactly these column headers.
columns_are() {
  local kind=$1 name=$2 columns
  shift 2
  read -ra columns < <(kc get "$kind" "$name" | head -1) # kubectl pads with runs of spaces
  [ "${columns[*]}" = "$*" ]
}
# pool_files DIR N: the pool's DIR (images or snapshots) holds exactly N image files.
pool_files() { [ "$(find "$E2E_WORK/pool/$1" -name '*.img' 2>/dev/null | wc -l)" = "$2" ]; }
# image_of_pv PV: the path of the pool image behind PV (from its CSI volume handle).
image_of_pv() { echo "$E2E_WORK/pool/images/$(field pv "$1" '{.spec.csi.volumeHandle}').img"; }
image_size_is() { [ "$(stat -c %s "$(image_of_pv "$1")")" = "$2" ]; }
generation_observed() {
  [ "$(field storagecluster "$CLUSTER" '{.status.observedGeneration}')" = \
    "$(field storagecluster "$CLUSTER" '{.metadata.generation}')" ]
}
kubernetes_version_is() { [[ $(field storagecluster "$CLUSTER" '{.status.kubernetesVersion}') == v$1.* ]]; }
capacity_published_for() {
  kc -n "$NS" get csistoragecapacity -o "jsonpath={.items[?(@.storageClassName==\"$1\")].capacity}" | grep -q .
}
no_snapshot_contents() { [ -z "$(kc get volumesnapshotcontent -o name)" ]; }
deletion_blocked_by() {
  field storagecluster "$CLUSTER" '{.status.conditions[?(@.reason=="DeletionBlocked")].message}' | grep -q "$1"
}
terminating_or_gone() {
  gone namespace "$1" || [ -n "$(field namespace "$1" '{.metadata.deletionTimestamp}')" ]
}
# Soko grants no VolumeGroupSnapshot API on purpose and the render turns the snapshotter's
# CSIVolumeGroupSnapshot gate off (versions.yaml); should a snapshotter still probe the API at start
# and turn the feature off because it may not list it, that one line is not an error.
no_forbidden_in_sidecar_logs() {
  ! grep -i forbidden "$E2E_WORK"/logs/csi-{provisioner,resizer,snapshotter}.log |
    grep -v 'disabling the VolumeGroupSnapshot feature'
}
no_operator_errors() { ! grep -E '^[0-9:.]+ ERROR ' "$E2E_WORK/logs/operator.log"; }
# The node processes run with the args of the applied objects; 'render' is what admins review.
same_args_as_render() {
  local version
  version=$(field storagecluster "$CLUSTER" '{.status.kubernetesVersion}')
  java -jar "$E2E_ROOT/operator/target/soko-operator.jar" render --kubernetes-version "$version" \
    "$E2E_WORK/storagecluster.yaml" 2>/dev/null >"$E2E_WORK/rendered.yaml" || return 1
  kc -n "$NS" get daemonset/"$CLUSTER-node" deployment/"$CLUSTER-controller" -o json >"$E2E_WORK/applied.json"
  python3 - "$E2E_WORK/rendered.yaml" "$E2E_WORK/applied.json" <<'PY'
import json, sys, yaml
def args(objs):
    return {(o["kind"], c["name"]): c.get("args", []) for o in objs
            if o and o["kind"] in ("DaemonSet", "Deployment")
            for c in o["spec"]["template"]["spec"]["containers"]}
rendered = args(yaml.safe_load_all(open(sys.argv[1])))
applied = args(json.load(open(sys.argv[2]))["items"])
if rendered != applied or not applied:
    print("rendered:", rendered, "\napplied:", applied, file=sys.stderr)
    sys.exit(1)
PY
}

say "starting the control plane and the operator"
started=$SECONDS
e2e_cluster_up
echo "    control plane + operator up in $((SECONDS - started)) s ($E2E_WORK)"

say "StorageCluster $CLUSTER -> the operator installs the driver"
cat >"$E2E_WORK/storagecluster.yaml" <<EOF
apiVersion: soko.dev/v1alpha1
kind: StorageCluster
metadata:
  name: $CLUSTER
spec:
  namespace: $NS
  driver:
    name: $DRIVER
    logLevel: debug
  pools:
    - name: main
      path: $E2E_WORK/pool
      capacity: 2Gi
      fsTypes: [ext4]
  storageClasses:
    - name: $CLASS
      pool: main
      fsType: ext4
  snapshots:
    enabled: true
    className: $SNAPCLASS
EOF
kc apply -f "$E2E_WORK/storagecluster.yaml" >/dev/null
waitfor "CSIDriver $DRIVER exists with storageCapacity=true" equals true csidriver "$DRIVER" '{.spec.storageCapacity}'
waitfor "StorageClass $CLASS provisions with $DRIVER" equals "$DRIVER" storageclass "$CLASS" '{.provisioner}'
check "StorageClass $CLASS is WaitForFirstConsumer with expansion" \
  equals "WaitForFirstConsumer true" storageclass "$CLASS" '{.volumeBindingMode} {.allowVolumeExpansion}'
waitfor "VolumeSnapshotClass $SNAPCLASS uses $DRIVER" equals "$DRIVER" volumesnapshotclass "$SNAPCLASS" '{.driver}'
waitfor "DaemonSet $NS/$CLUSTER-node exists" exists daemonset "$CLUSTER-node" "$NS"
waitfor "Deployment $NS/$CLUSTER-controller exists" exists deployment "$CLUSTER-controller" "$NS"
waitfor "status.observedGeneration = metadata.generation" generation_observed
check "status reports Kubernetes version v1.36" kubernetes_version_is 1.36
check "'render' prints the container args the operator applied (DaemonSet, Deployment)" same_args_as_render
check "status condition Compatible=True" equals True storagecluster "$CLUSTER" '{.status.conditions[?(@.type=="Compatible")].status}'
check "'kubectl get stc' shows Ready first and Age last" \
  columns_are storagecluster "$CLUSTER" NAME READY KUBERNETES NODES-READY NODES-DESIRED USED TOTAL AGE

section_ok
say "the node: driver + sidecars as local processes, with the operator's args and ServiceAccounts"
started=$SECONDS
e2e_node_up "$CLUSTER"
echo "    node processes started in $((SECONDS - started)) s; driver args: ${E2E_DRIVER_ARGS[*]}"
waitfor "provisioner publishes CSIStorageCapacity for $CLASS" capacity_published_for "$CLASS"
check "the driver checks pools against the kubelet directory's filesystem and refuses none" \
  pool_accepted
# The operator watches CSINode and CSIStorageCapacity: status follows without a spec change.
waitfor "status counts the node as registered (CSINode)" \
  equals 1 storagecluster "$CLUSTER" '{.status.nodes.registered}'
waitfor "status reports the pool's capacity (CSIStorageCapacity)" \
  status_has_pool_capacity "$CLUSTER"

section_ok
say "a PVC is provisioned on the node"
kc create namespace "$APP_NS" >/dev/null
kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
  namespace: $APP_NS
  annotations:
    volume.kubernetes.io/selected-node: $E2E_NODE
spec:
  storageClassName: $CLASS
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 64Mi}}
EOF
waitfor "PVC data is Bound" equals Bound pvc data '{.status.phase}' "$APP_NS"
pv=$(field pvc data '{.spec.volumeName}' "$APP_NS")
check "PV $pv is a CSI volume of $DRIVER" equals "$DRIVER" pv "$pv" '{.spec.csi.driver}'
check "PV $pv is pinned to the node by topology" \
  equals "$E2E_NODE" pv "$pv" '{.spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[?(@.key=="topology.soko.dev/node")].values[0]}'
check "the volume's image file exists in the pool" test -f "$(image_of_pv "$pv")"
check "the image is 64 MiB, the size asked for" image_size_is "$pv" $((64 << 20))

section_ok
say "the PVC is expanded"
kc -n "$APP_NS" patch pvc data --type merge -p '{"spec":{"resources":{"requests":{"storage":"128Mi"}}}}' >/dev/null
waitfor "the resizer grows PV $pv to 128Mi (ControllerExpandVolume)" equals 128Mi pv "$pv" '{.spec.capacity.storage}'
waitfor "PVC waits for node expansion (FileSystemResizePending, needs a kubelet)" \
  equals True pvc data '{.status.conditions[?(@.type=="FileSystemResizePending")].status}' "$APP_NS"

section_ok
say "a VolumeSnapshot of the PVC, restored into a new PVC"
kc apply -f - >/dev/null <<EOF
apiVersion: snapshot.storage.k8s.io/v1
kind: VolumeSnapshot
metadata:
  name: snap
  namespace: $APP_NS
spec:
  volumeSnapshotClassName: $SNAPCLASS
  source: {persistentVolumeClaimName: data}
EOF
waitfor "VolumeSnapshot snap is ReadyToUse" equals true volumesnapshot snap '{.status.readyToUse}' "$APP_NS"
check "the snapshot's image file exists in the pool" pool_files snapshots 1
restore_size=$(field volumesnapshot snap '{.status.restoreSize}' "$APP_NS")
kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: restored
  namespace: $APP_NS
  annotations:
    volume.kubernetes.io/selected-node: $E2E_NODE
spec:
  storageClassName: $CLASS
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: ${restore_size:-64Mi}}}
  dataSource: {apiGroup: snapshot.storage.k8s.io, kind: VolumeSnapshot, name: snap}
EOF
waitfor "PVC restored (from snapshot snap, $restore_size) is Bound" equals Bound pvc restored '{.status.phase}' "$APP_NS"
check "the pool holds two volume images" pool_files images 2

section_ok
say "deleting a snapshot and a PVC removes their images from the pool"
restored_pv=$(field pvc restored '{.spec.volumeName}' "$APP_NS")
kc -n "$APP_NS" delete volumesnapshot snap --wait=false >/dev/null
kc -n "$APP_NS" delete pvc restored --wait=false >/dev/null
waitfor "VolumeSnapshot and its content are gone" no_snapshot_contents
waitfor "the snapshot image is deleted from the pool" pool_files snapshots 0
waitfor "PV $restored_pv is deleted" gone pv "$restored_pv"
waitfor "one volume image is left in the pool" pool_files images 1
section_ok

say "uninstall waits while a volume of the driver exists"
kc delete storagecluster "$CLUSTER" --wait=false >/dev/null
waitfor "status says deletion is blocked by PV $pv" deletion_blocked_by "$pv"
check "CSIDriver $DRIVER is kept meanwhile" exists csidriver "$DRIVER"
kc -n "$APP_NS" delete pvc data --wait=false >/dev/null
waitfor "PV $pv is deleted" gone pv "$pv"
waitfor "no volume image is left in the pool" pool_files images 0
check "no RBAC Forbidden errors in the sidecars' logs" no_forbidden_in_sidecar_logs
section_ok

say "with the last volume gone, the StorageCluster is uninstalled"
waitfor "StorageCluster $CLUSTER is gone (finalizer done)" gone storagecluster "$CLUSTER"
waitfor "CSIDriver $DRIVER is gone" gone csidriver "$DRIVER"
waitfor "StorageClass $CLASS is gone" gone storageclass "$CLASS"
waitfor "VolumeSnapshotClass $SNAPCLASS is gone" gone volumesnapshotclass "$SNAPCLASS"
waitfor "namespace $NS is Terminating" terminating_or_gone "$NS"
waitfor "namespace $NS is gone (its pods' end confirmed as a kubelet would)" e2e_namespace_gone_with_kubelet "$NS"
check "no operator error in its log" no_operator_errors
