#!/usr/bin/env bash
# The main demo (`make demo`): Soko on a real node. A local cluster with a real kubelet and
# containerd (hack/local-cluster.sh), `helm install` of the chart with a StorageCluster, then what an
# app team does with volumes: a pod writes data, the volume grows while the pod runs, a snapshot is
# restored into a second pod that reads the same bytes, a raw block volume, a claim too large for
# any pool; then uninstall. Each step says what it waits for and how long it took; a table closes
# the run. The same flow, with assertions, is the end-to-end tier (operator/src/test/java/dev/soko/e2e).
# Needs root. DEMO_KEEP=1 leaves the cluster running at the end.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
require_root "the demo"
ROOT=$(soko_root)
BIN=${SOKO_CACHE:-$HOME/.cache/soko}/bin
cluster=$ROOT/hack/local-cluster.sh
APPS=demo
TIMEOUT=180

steps=()
step_started=0
step_name=""
step() {
  finish_step
  step_name=$1
  step_started=$(date +%s%N)
  printf '\n\033[1m==> %s\033[0m\n' "$1"
}
finish_step() {
  [ -n "$step_name" ] || return 0
  local ms=$((($(date +%s%N) - step_started) / 1000000))
  printf '    done in %d.%01d s\n' $((ms / 1000)) $((ms % 1000 / 100))
  steps+=("$(printf '%-64s %6d.%01d s' "$step_name" $((ms / 1000)) $((ms % 1000 / 100)))")
  step_name=""
}
kc() { "$BIN/kubectl" "$@"; }
# await WHAT COMMAND...: says what it waits for, polls COMMAND until it succeeds.
await() {
  local what=$1
  shift
  printf '    waiting for %s ...\n' "$what"
  wait_until "$TIMEOUT" "$@" || die "timed out after $TIMEOUT s waiting for: $what"
}
is() { [ "$(kc get "${@:3}" -o "jsonpath=$2" 2>/dev/null)" = "$1" ]; }
gone() { ! kc get "$@" >/dev/null 2>&1; }
in_pod() { kc -n "$APPS" exec "$1" -- sh -c "$2"; }
# app_pod NAME CLAIM MOUNT SCRIPT: a busybox pod with CLAIM at MOUNT (a path: the filesystem;
# /dev/...: the raw device) that runs SCRIPT.
app_pod() {
  local how=volumeMounts key=mountPath
  [[ $3 == /dev/* ]] && how=volumeDevices key=devicePath
  cat <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: $APPS}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: $registry/busybox:1
    command: [sh, -c, "$4"]
    $how: [{name: data, $key: $3}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: $2}}]
EOF
}

finish() {
  local rc=$?
  if [ "${DEMO_KEEP:-0}" = 1 ] && ((rc == 0)); then
    echo "cluster left running: eval \"\$(hack/local-cluster.sh env)\"; stop it with make cluster-down"
  else
    bash "$cluster" down || rc=1
  fi
  finish_step
  if ((rc == 0)); then
    printf '\n\033[1mdemo complete\033[0m\n'
    printf '  %s\n' "${steps[@]}"
    printf '  %-64s %6d s\n' "total" "$SECONDS"
  else
    printf '\n\033[1mdemo FAILED\033[0m (exit %d)\n' "$rc" >&2
  fi
  exit "$rc"
}
trap finish EXIT
trap 'exit 130' INT TERM

step "start a real node: control plane, containerd, kubelet, kube-proxy; import the images"
bash "$cluster" up >/dev/null
eval "$(bash "$cluster" env)"
registry=$SOKO_CLUSTER_IMAGE_REGISTRY
echo "    KUBECONFIG=$KUBECONFIG"
show get nodes -o wide

step "helm install the operator, with a StorageCluster (one pool, an xfs and an ext4 class)"
cat >"$SOKO_CLUSTER_DIR/demo-values.yaml" <<EOF
image: {registry: $registry}
imageRegistry: $registry
storageCluster:
  create: true
  name: soko
  spec:
    pools:
      - {name: default, path: /var/lib/soko/pools/default}
    storageClasses:
      - {name: soko, pool: default, fsType: xfs, default: true}
      - {name: soko-ext4, pool: default, fsType: ext4}
    snapshots: {enabled: true, className: soko-snapshots}
EOF
sed 's/^/      /' "$SOKO_CLUSTER_DIR/demo-values.yaml"
"$BIN/helm" install soko "$ROOT/helm/soko" -n soko-operator --create-namespace \
  -f "$SOKO_CLUSTER_DIR/demo-values.yaml" --wait --timeout 3m | sed 's/^/      /'

step "the operator installs the driver; the kubelet registers it; the StorageCluster is Ready"
await "StorageCluster soko Ready=True" is True '{.status.conditions[?(@.type=="Ready")].status}' storagecluster soko
await "the pool's free capacity in status" bash -c "$BIN/kubectl get storagecluster soko -o jsonpath='{.status.pools[0].available}' | grep -q ."
show get storagecluster
show get pods -A -o wide
show get csinode "$SOKO_CLUSTER_NODE" -o jsonpath='{.spec.drivers}'
echo

step "a PVC (WaitForFirstConsumer) and a pod that writes 16 MiB to it"
kc create namespace "$APPS" >/dev/null
kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: $APPS}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 320Mi}}
EOF
app_pod writer data /data "dd if=/dev/urandom of=/data/blob bs=1M count=16 && sync && sleep 1000000" | kc apply -f - >/dev/null
await "pod writer Running" is Running '{.status.phase}' -n "$APPS" pod writer
await "the data written" in_pod writer 'test -s /data/blob && ! pgrep dd'
sum=$(in_pod writer 'sha256sum /data/blob | cut -d" " -f1')
show -n "$APPS" get pvc,pod
in_pod writer 'df -h /data; grep " /data " /proc/mounts' | sed 's/^/      /'
echo "      sha256 of /data/blob: $sum"

step "expand the PVC to 640Mi while the pod runs (xfs grows online)"
grow_started=$(date +%s%N)
kc -n "$APPS" patch pvc data --type merge -p '{"spec":{"resources":{"requests":{"storage":"640Mi"}}}}' >/dev/null
await "the pod to see the bigger filesystem" bash -c \
  "[ \$($BIN/kubectl -n $APPS exec writer -- df -k /data | awk 'NR==2 {print \$2}') -gt 500000 ]"
grow_ms=$((($(date +%s%N) - grow_started) / 1000000))
# The driver's controller hands the growth to the volume's node, which grows it at once; the
# kubelet's path (spec.features.immediateGrowth: false, or a node that cannot) waits for its next
# sync of the pod, and leaves its FileSystemResizeSuccessful event on the claim.
grown_by="the driver on the volume's node, at once"
if kc -n "$APPS" get events --field-selector reason=FileSystemResizeSuccessful -o name | grep -q .; then
  grown_by="the kubelet, at its next sync of the pod"
fi
printf '    the pod saw the new size %d.%01d s after the patch; grown by %s\n' \
  $((grow_ms / 1000)) $((grow_ms % 1000 / 100)) "$grown_by"
in_pod writer 'df -h /data' | sed 's/^/      /'

step "snapshot the PVC and restore it into a new PVC that a second pod reads"
kc apply -f - >/dev/null <<EOF
apiVersion: snapshot.storage.k8s.io/v1
kind: VolumeSnapshot
metadata: {name: snap, namespace: $APPS}
spec:
  volumeSnapshotClassName: soko-snapshots
  source: {persistentVolumeClaimName: data}
EOF
await "VolumeSnapshot snap readyToUse" is true '{.status.readyToUse}' -n "$APPS" volumesnapshot snap
kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: restored, namespace: $APPS}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 640Mi}}
  dataSource: {apiGroup: snapshot.storage.k8s.io, kind: VolumeSnapshot, name: snap}
EOF
app_pod reader restored /data "sleep 1000000" | kc apply -f - >/dev/null
await "pod reader Running" is Running '{.status.phase}' -n "$APPS" pod reader
restored=$(in_pod reader 'sha256sum /data/blob | cut -d" " -f1')
show -n "$APPS" get volumesnapshot,pvc
echo "      sha256 written: $sum"
echo "      sha256 read   : $restored"
[ "$sum" = "$restored" ] || die "the restored volume holds other bytes"

step "a block-mode PVC: the pod writes and reads the raw device"
kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: raw, namespace: $APPS}
spec:
  accessModes: [ReadWriteOnce]
  volumeMode: Block
  storageClassName: soko-ext4
  resources: {requests: {storage: 64Mi}}
EOF
app_pod block raw /dev/xvda "sleep 1000000" | kc apply -f - >/dev/null
await "pod block Running" is Running '{.status.phase}' -n "$APPS" pod block
# shellcheck disable=SC2016 # the pod's shell expands these
in_pod block 'echo "hello, raw device" | dd of=/dev/xvda conv=fsync 2>/dev/null; \
  echo "      size: $(blockdev --getsize64 /dev/xvda) bytes"; echo "      read back: $(head -c 17 /dev/xvda)"'

step "a PVC larger than any pool stays Pending, with an event that says why"
kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: huge, namespace: $APPS}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 100Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: too-big, namespace: $APPS}
spec:
  containers:
  - {name: app, image: $registry/busybox:1, command: [sleep, "1000000"], volumeMounts: [{name: d, mountPath: /data}]}
  volumes: [{name: d, persistentVolumeClaim: {claimName: huge}}]
EOF
await "a FailedScheduling event" bash -c \
  "$BIN/kubectl -n $APPS get events --field-selector involvedObject.name=too-big,reason=FailedScheduling -o name | grep -q ."
kc -n "$APPS" get events --field-selector involvedObject.name=too-big,reason=FailedScheduling \
  -o 'jsonpath={range .items[*]}{"      "}{.message}{"\n"}{end}' | head -1
show -n "$APPS" get pvc huge

step "uninstall: deleting the StorageCluster is refused while volumes exist"
kc delete storagecluster soko --wait=false >/dev/null
await "the status to say why" bash -c \
  "$BIN/kubectl get storagecluster soko -o jsonpath='{.status.conditions[*].reason}' | grep -q DeletionBlocked"
kc get storagecluster soko -o 'jsonpath={range .status.conditions[?(@.reason=="DeletionBlocked")]}{"      "}{.message}{"\n"}{end}' | head -1

step "delete the apps' pods and PVCs: the StorageCluster goes, then helm uninstall"
kc delete namespace "$APPS" --wait=false >/dev/null
await "every PersistentVolume deleted" bash -c "[ -z \"\$($BIN/kubectl get pv -o name)\" ]"
await "StorageCluster soko gone" gone storagecluster soko
await "namespace soko-system gone (the operator made it)" gone namespace soko-system
"$BIN/helm" uninstall soko -n soko-operator --wait --timeout 2m | sed 's/^/      /'
await "no pod left in soko-operator" bash -c "[ -z \"\$($BIN/kubectl -n soko-operator get pods -o name)\" ]"
show get csidriver,storageclass,daemonsets -A

step "stop the node and remove everything"
