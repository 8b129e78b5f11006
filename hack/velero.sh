#!/usr/bin/env bash
# Velero (server and node-agent, with its CSI snapshot data mover), its AWS plugin and a MinIO S3
# store on the local cluster (hack/local-cluster.sh), every program built from the pinned modules
# (hack/versions.env, hack/tools.sh) and packed into images offline. Needs root and a running cluster.
#
#   hack/velero.sh up       build the images (cached), import them on every node, start MinIO on the
#                           first node with the bucket "velero", and install Velero with the node-agent
#   hack/velero.sh down     uninstall Velero and MinIO (their namespaces and cluster-wide objects)
#   hack/velero.sh images   (re)build the three images only
#   hack/velero.sh env      the variables its clients need (the store's address and credentials)
#
# MinIO runs on the first node (the control plane's, which a node-loss test never stops), so a
# backup outlives any other node. The cluster has no DNS: MinIO's Service has a fixed cluster IP,
# and Velero's BackupStorageLocation names it by that address.
set -euo pipefail
SOKO_LOG_TAG=velero
source "$(dirname "$0")/lib.sh"
# shellcheck source=versions.env
source "$(dirname "$0")/versions.env"

ROOT=$(soko_root)
BIN=${SOKO_CACHE:-$HOME/.cache/soko}/bin
IMAGES_DIR=${SOKO_CACHE:-$HOME/.cache/soko}/node-images/velero
CLUSTER=$ROOT/hack/local-cluster.sh
REGISTRY=$(cluster_registry)
VELERO_IMAGE=$REGISTRY/velero/velero:$VELERO_VERSION
PLUGIN_IMAGE=$REGISTRY/velero/velero-plugin-for-aws:$VELERO_AWS_PLUGIN_VERSION
MINIO_IMAGE=$REGISTRY/minio/minio:$MINIO_VERSION
MINIO_IP=10.0.0.200
MINIO_USER=soko-backup
# A fixed secret is enough: the store is reachable only inside the cluster's namespaces.
MINIO_PASSWORD=soko-backup-secret
BUCKET=velero

kc() { "$BIN/kubectl" "$@"; }

build_images() {
  local tool
  for tool in velero velero-plugin-for-aws minio; do
    [ -x "$BIN/$tool" ] || bash "$ROOT/hack/tools.sh" "$tool" >/dev/null
  done
  mkdir -p "$IMAGES_DIR"
  local -a links=()
  local name
  while read -r name; do
    [ "$name" = busybox ] || links+=(--symlink "/bin/$name:busybox")
  done < <(/bin/busybox --list)
  # Velero's server, node-agent and data-mover pods all run /velero; kopia writes its caches under
  # the scratch folder and HOME.
  python3 "$ROOT/hack/oci-image.py" --name "$VELERO_IMAGE" --out "$IMAGES_DIR/velero.oci.tar" \
    --file "$(readlink -f "$BIN/velero"):/velero" --dir /tmp:1777 --dir /scratch:1777 \
    --env HOME=/scratch --entrypoint /velero
  # A plugin image's one job is to copy its plugin into the server's /target as an init container.
  python3 "$ROOT/hack/oci-image.py" --name "$PLUGIN_IMAGE" --out "$IMAGES_DIR/velero-plugin-for-aws.oci.tar" \
    --file "$(readlink -f "$BIN/velero-plugin-for-aws"):/plugins/velero-plugin-for-aws" \
    --file /bin/busybox:/bin/busybox "${links[@]}" \
    --entrypoint /bin/cp --cmd /plugins/velero-plugin-for-aws --cmd /target/
  python3 "$ROOT/hack/oci-image.py" --name "$MINIO_IMAGE" --out "$IMAGES_DIR/minio.oci.tar" \
    --file "$(readlink -f "$BIN/minio"):/minio" --dir /data:0700 --dir /tmp:1777 --env HOME=/tmp \
    --entrypoint /minio
  echo "$VELERO_VERSION $VELERO_AWS_PLUGIN_VERSION $MINIO_VERSION" >"$IMAGES_DIR/versions"
}

images_current() {
  [ "$(cat "$IMAGES_DIR/versions" 2>/dev/null)" = "$VELERO_VERSION $VELERO_AWS_PLUGIN_VERSION $MINIO_VERSION" ]
}

import_images() {
  local node archive
  while read -r node; do
    for archive in "$IMAGES_DIR"/*.oci.tar; do
      bash "$CLUSTER" ctr --node "$node" images import --platform linux/amd64 "$archive" >/dev/null 2>>"$STATE_LOG" ||
        die "cannot import $archive on $node"
    done
  done < <(bash "$CLUSTER" nodes)
}

first_node() { bash "$CLUSTER" nodes | head -1; }

minio_manifest() {
  cat <<EOF
apiVersion: v1
kind: Namespace
metadata: {name: minio}
---
apiVersion: v1
kind: Secret
metadata: {name: minio-root, namespace: minio}
stringData: {MINIO_ROOT_USER: $MINIO_USER, MINIO_ROOT_PASSWORD: $MINIO_PASSWORD}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: minio, namespace: minio}
spec:
  replicas: 1
  selector: {matchLabels: {app: minio}}
  template:
    metadata: {labels: {app: minio}}
    spec:
      nodeSelector: {kubernetes.io/hostname: $(first_node)}
      containers:
        - name: minio
          image: $MINIO_IMAGE
          args: [server, /data, --address, ":9000", --console-address, ":9001"]
          envFrom: [{secretRef: {name: minio-root}}]
          ports: [{containerPort: 9000, name: s3}]
          readinessProbe: {httpGet: {path: /minio/health/ready, port: 9000}, periodSeconds: 2}
          volumeMounts: [{name: data, mountPath: /data}]
      volumes: [{name: data, emptyDir: {}}]
---
apiVersion: v1
kind: Service
metadata: {name: minio, namespace: minio}
spec:
  clusterIP: $MINIO_IP
  selector: {app: minio}
  ports: [{name: s3, port: 9000, targetPort: 9000}]
EOF
}

# make_bucket: S3's CreateBucket, signed with the root credentials, sent from the first node's
# network namespace (the host has no route to the cluster's Service addresses).
make_bucket() {
  local code
  code=$(ip netns exec soko-cluster curl -s -o /dev/null -w '%{http_code}' -X PUT \
    --aws-sigv4 "aws:amz:us-east-1:s3" --user "$MINIO_USER:$MINIO_PASSWORD" \
    "http://$MINIO_IP:9000/$BUCKET") || return 1
  # 409: the bucket is there already (a second up).
  [ "$code" = 200 ] || [ "$code" = 409 ]
}

up() {
  require_root "Velero on the local cluster"
  eval "$(bash "$CLUSTER" env)"
  images_current || build_images
  import_images
  minio_manifest | kc apply -f - >/dev/null
  kc -n minio rollout status deployment/minio --timeout=120s >/dev/null || die "MinIO did not start"
  wait_until 30 make_bucket || die "cannot create the bucket $BUCKET in MinIO"
  local credentials
  credentials=$(mktemp)
  printf '[default]\naws_access_key_id=%s\naws_secret_access_key=%s\n' "$MINIO_USER" "$MINIO_PASSWORD" >"$credentials"
  # EnableCSI: Velero's CSI snapshots, which its snapshot data mover (--snapshot-move-data) moves.
  "$BIN/velero" install --provider aws --image "$VELERO_IMAGE" --plugins "$PLUGIN_IMAGE" \
    --bucket "$BUCKET" --secret-file "$credentials" --use-volume-snapshots=false --use-node-agent \
    --features=EnableCSI --backup-location-config "region=minio,s3ForcePathStyle=true,s3Url=http://$MINIO_IP:9000" \
    --wait >>"$STATE_LOG" 2>&1 || { rm -f "$credentials"; die "velero install failed (see $STATE_LOG)"; }
  rm -f "$credentials"
  kc -n velero rollout status daemonset/node-agent --timeout=120s >/dev/null || die "Velero's node-agent did not start"
  wait_until 60 bsl_available || die "Velero's backup storage location is not Available (see $STATE_LOG)"
  log "Velero $VELERO_VERSION with node-agent on every node, MinIO at $MINIO_IP:9000 (bucket $BUCKET)"
}

bsl_available() {
  [ "$(kc -n velero get backupstoragelocation default -o jsonpath='{.status.phase}')" = Available ]
}

down() {
  require_root "Velero on the local cluster"
  eval "$(bash "$CLUSTER" env)"
  # Bounded: a backup cut midway can leave a VolumeSnapshot whose driver is already gone.
  timeout 180 "$BIN/velero" uninstall --force >/dev/null 2>&1 || log "velero uninstall did not finish; going on"
  kc delete namespace minio --ignore-not-found --wait=true >/dev/null
  log "Velero and MinIO removed"
}

STATE_LOG=${SOKO_CLUSTER_DIR:-/var/tmp/soko-cluster}/logs/velero-install.log
case ${1:-} in
up) up ;;
down) down ;;
images) build_images ;;
env)
  echo "export SOKO_VELERO_S3=http://$MINIO_IP:9000"
  echo "export SOKO_VELERO_BUCKET=$BUCKET"
  ;;
*) die "usage: hack/velero.sh up|down|images|env" ;;
esac
