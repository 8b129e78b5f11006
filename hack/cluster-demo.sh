#!/usr/bin/env bash
# The cluster demo: a local control plane, the operator and "the node" (driver + real CSI sidecars
# as local processes, see hack/e2e/cluster-lib.sh), then one StorageCluster and a volume's life
# through Kubernetes objects: provision -> expand -> snapshot -> restore -> delete -> uninstall.
# Prints each step, its duration and the interesting objects. Needs root (loop devices).
# The same flow, with assertions, is operator/src/test/java/dev/soko/e2e/ControlPlaneE2E.java.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/e2e/cluster-lib.sh"
require_root "the cluster demo"

CLUSTER=demo
NS=soko-demo
APP_NS=demo-app
TIMEOUT=120

trap 'rc=$?; ((rc == 0 || rc == 130)) || E2E_FAILED=1; e2e_cluster_down' EXIT
trap 'E2E_FAILED=1; exit 130' INT TERM

step_started=0
step() {
  step_started=$(date +%s%N)
  printf '\n\033[1m==> %s\033[0m\n' "$*"
}
done_in() { printf '    (%d ms)\n' $((($(date +%s%N) - step_started) / 1000000)); }
await() { # await WHAT COMMAND...
  local what=$1
  shift
  wait_until "$TIMEOUT" "$@" || {
    E2E_FAILED=1
    die "timed out after $TIMEOUT s waiting for: $what"
  }
}
# list_allocated DIR: each file's allocated KiB beside its size (the images are sparse).
list_allocated() { find "$1" -mindepth 1 -maxdepth 1 -printf '      %k KiB allocated, %s bytes  %f\n'; }

step "start etcd, kube-apiserver (RBAC), kube-controller-manager, snapshot-controller and the operator"
e2e_cluster_up
done_in
echo "    work dir: $E2E_WORK   KUBECONFIG=$E2E_WORK/admin.kubeconfig"
show get nodes

step "apply a StorageCluster: one pool of 2 GiB, one StorageClass, snapshots on"
cat >"$E2E_WORK/storagecluster.yaml" <<EOF
apiVersion: soko.dev/v1alpha1
kind: StorageCluster
metadata:
  name: $CLUSTER
spec:
  namespace: $NS
  driver:
    name: demo.csi.soko.dev
  pools:
    - name: main
      path: $E2E_WORK/pool
      capacity: 2Gi
      fsTypes: [ext4]
  storageClasses:
    - name: soko-demo
      pool: main
      fsType: ext4
      default: true
  snapshots:
    enabled: true
    className: soko-demo-snapshots
EOF
sed 's/^/    /' "$E2E_WORK/storagecluster.yaml"
kc apply -f "$E2E_WORK/storagecluster.yaml" >/dev/null
await "the operator to apply every object" bash -c \
  "[ \"\$(kubectl --kubeconfig $E2E_WORK/admin.kubeconfig get storagecluster $CLUSTER -o jsonpath='{.status.observedGeneration}')\" = 1 ]"
done_in
show get storagecluster
show get csidriver,storageclass,volumesnapshotclass
show -n "$NS" get daemonset,deployment,serviceaccount
show get storagecluster "$CLUSTER" -o 'jsonpath={range .status.conditions[*]}{"    "}{.type}={.status} ({.reason}): {.message}{"\n"}{end}'

step "play the node: driver (node + controller mode) and provisioner, snapshotter, resizer with the operator's args"
e2e_node_up "$CLUSTER"
await "CSIStorageCapacity from the provisioner" bash -c \
  "kubectl --kubeconfig $E2E_WORK/admin.kubeconfig -n $NS get csistoragecapacity -o name | grep -q ."
done_in
printf '    driver: soko-driver %s\n' "${E2E_DRIVER_ARGS[*]}"
show get csinode
show -n "$NS" get csistoragecapacity -o custom-columns=CLASS:.storageClassName,CAPACITY:.capacity,MAX-VOLUME:.maximumVolumeSize,NODE:.nodeTopology.matchLabels

step "a PVC of 64Mi on the node (the annotation the scheduler sets for WaitForFirstConsumer)"
kc create namespace "$APP_NS" >/dev/null
kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
  namespace: $APP_NS
  annotations: {volume.kubernetes.io/selected-node: $E2E_NODE}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 64Mi}}
EOF
await "PVC data Bound" equals Bound pvc data '{.status.phase}' "$APP_NS"
done_in
pv=$(field pvc data '{.spec.volumeName}' "$APP_NS")
show -n "$APP_NS" get pvc
show get pv "$pv"
echo "    pool images:" && list_allocated "$E2E_WORK/pool/images"

step "expand the PVC to 128Mi: the resizer calls ControllerExpandVolume, the PV grows"
kc -n "$APP_NS" patch pvc data --type merge -p '{"spec":{"resources":{"requests":{"storage":"128Mi"}}}}' >/dev/null
await "PV capacity 128Mi" equals 128Mi pv "$pv" '{.spec.capacity.storage}'
done_in
show get pv "$pv"
show -n "$APP_NS" get pvc data -o 'jsonpath={range .status.conditions[*]}{"    "}{.type}: {.message}{"\n"}{end}'
echo "    (the file system grows in NodeExpandVolume when a kubelet mounts the volume; no kubelet here)"

step "snapshot the PVC"
kc apply -f - >/dev/null <<EOF
apiVersion: snapshot.storage.k8s.io/v1
kind: VolumeSnapshot
metadata: {name: snap, namespace: $APP_NS}
spec:
  volumeSnapshotClassName: soko-demo-snapshots
  source: {persistentVolumeClaimName: data}
EOF
await "VolumeSnapshot ReadyToUse" equals true volumesnapshot snap '{.status.readyToUse}' "$APP_NS"
done_in
show -n "$APP_NS" get volumesnapshot
echo "    pool snapshots:" && list_allocated "$E2E_WORK/pool/snapshots"

step "restore the snapshot into a new PVC"
kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: restored
  namespace: $APP_NS
  annotations: {volume.kubernetes.io/selected-node: $E2E_NODE}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: $(field volumesnapshot snap '{.status.restoreSize}' "$APP_NS")}}
  dataSource: {apiGroup: snapshot.storage.k8s.io, kind: VolumeSnapshot, name: snap}
EOF
await "PVC restored Bound" equals Bound pvc restored '{.status.phase}' "$APP_NS"
done_in
show -n "$APP_NS" get pvc
show get storagecluster

step "delete the snapshot and both PVCs: the driver removes their images"
kc -n "$APP_NS" delete volumesnapshot snap --wait=false >/dev/null
kc -n "$APP_NS" delete pvc data restored --wait=false >/dev/null
await "no PV left" bash -c "! kubectl --kubeconfig $E2E_WORK/admin.kubeconfig get pv -o name | grep -q ."
await "no image left" bash -c "[ -z \"\$(find $E2E_WORK/pool -name '*.img')\" ]"
done_in
show get pv,volumesnapshotcontent
echo "    pool images: $(find "$E2E_WORK/pool/images" -name '*.img' | wc -l), snapshots: $(find "$E2E_WORK/pool/snapshots" -name '*.img' | wc -l)"

step "delete the StorageCluster: the operator uninstalls everything it created"
kc delete storagecluster "$CLUSTER" --wait=false >/dev/null
await "StorageCluster gone" gone storagecluster "$CLUSTER"
await "namespace $NS gone" e2e_namespace_gone_with_kubelet "$NS"
done_in
show get storagecluster,csidriver,storageclass,volumesnapshotclass
printf '\n\033[1m==> demo complete\033[0m\n'
