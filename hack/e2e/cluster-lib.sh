# shellcheck shell=bash
# A local control plane and "node" for the end-to-end test and the cluster demo. Source it; it
# defines functions and the variables they share (E2E_*). Needs root (loop devices, mounts).
#
#   e2e_cluster_up          etcd + kube-apiserver (RBAC, loopback, fresh certs) + kube-controller-manager
#                           + CRDs (StorageCluster, VolumeSnapshot) + snapshot-controller + a Node
#                           object + the operator jar
#   e2e_node_up CLUSTER     plays the node and the controller pod for StorageCluster CLUSTER: reads
#                           the containers' args from the DaemonSet and Deployment the operator
#                           applied, and runs the driver (node and controller mode) and the sidecars
#                           as local processes with those args, each under its own ServiceAccount
#   e2e_cluster_down        stops every process started here, unmounts, detaches loop devices,
#                           removes the work dir; keeps the logs when E2E_FAILED=1
#
# There is no kubelet and no container runtime: the Node object, the node plugin Pod object (the
# owner of CSIStorageCapacity objects) and the CSINode object that node-driver-registrar + kubelet
# would create are written here, with the values the driver reports (node id = node name, topology
# key topology.soko.dev/node).

E2E_BIN=${SOKO_CACHE:-$HOME/.cache/soko}/bin
E2E_NODE=${E2E_NODE:-soko-e2e-node}
E2E_PIDS=()
E2E_FAILED=0


# A free TCP port on loopback (the kernel picks it).
e2e_free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# Runs "$@" in the background with its output in $E2E_WORK/logs/NAME.log and remembers its pid.
e2e_spawn() {
  local name=$1
  shift
  "$@" >"$E2E_WORK/logs/$name.log" 2>&1 &
  E2E_PIDS+=("$!:$name")
}

kc() { "$E2E_BIN/kubectl" --kubeconfig "$E2E_WORK/admin.kubeconfig" "$@"; }
# field KIND NAME JSONPATH [NAMESPACE]: prints a field of an object.
field() { kc ${4:+-n "$4"} get "$1" "$2" -o "jsonpath=$3"; }
# equals VALUE KIND NAME JSONPATH [NAMESPACE]: the field is VALUE.
equals() { [ "$(field "$2" "$3" "$4" "${5:-}")" = "$1" ]; }
exists() { kc ${3:+-n "$3"} get "$1" "$2" >/dev/null 2>&1; }
gone() { ! exists "$@"; }

e2e_check_tools() {
  local tool missing=()
  for tool in etcd kube-apiserver kube-controller-manager kubectl csi-provisioner csi-resizer \
    csi-snapshotter snapshot-controller; do
    [ -x "$E2E_BIN/$tool" ] || missing+=("$tool")
  done
  ((${#missing[@]} == 0)) ||
    die "missing tools in $E2E_BIN: ${missing[*]} (run: hack/tools.sh ${missing[*]} snapshot-crds)"
  [ -d "$E2E_BIN/../crds/snapshot" ] || die "VolumeSnapshot CRDs missing (run: hack/tools.sh snapshot-crds)"
  [ -f "$E2E_ROOT/driver/target/soko-driver.jar" ] || die "driver jar missing: run 'make build'"
  [ -f "$E2E_ROOT/operator/target/soko-operator.jar" ] || die "operator jar missing: run 'make build'"
}

# Certificates and service-account keys, generated fresh into $E2E_WORK/pki.
e2e_make_pki() {
  local pki=$E2E_WORK/pki
  mkdir -p "$pki"
  (
    cd "$pki"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 1 \
      -subj /CN=soko-e2e-ca 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr \
      -subj /CN=kube-apiserver 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >apiserver.ext
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 \
      -extfile apiserver.ext -out apiserver.crt 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -keyout admin.key -out admin.csr \
      -subj "/O=system:masters/CN=soko-e2e-admin" 2>/dev/null
    openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 \
      -out admin.crt 2>/dev/null
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
  ) || die "openssl failed to make the certificates"
}

# Writes a kubeconfig $1 for the API server with client cert ($2, $3) or bearer token ($2 = token:T).
e2e_kubeconfig() {
  local file=$1 user
  if [[ $2 == token:* ]]; then
    user="    token: ${2#token:}"
  else
    user="    client-certificate: $2
    client-key: $3"
  fi
  cat >"$file" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: https://127.0.0.1:$E2E_API_PORT
    certificate-authority: $E2E_WORK/pki/ca.crt
users:
- name: e2e
  user:
$user
contexts:
- name: e2e
  context: {cluster: e2e, user: e2e}
current-context: e2e
EOF
}

e2e_cluster_up() {
  E2E_ROOT=$(soko_root)
  e2e_check_tools
  E2E_WORK=$(mktemp -d /tmp/soko-e2e.XXXXXX)
  mkdir -p "$E2E_WORK/logs" "$E2E_WORK/pool" "$E2E_WORK/csi-node" "$E2E_WORK/csi-controller"
  # The pool gets a filesystem of its own, as on a real node: the driver refuses a pool on the
  # filesystem of the kubelet's directory, which here is $E2E_WORK/kubelet on the host's disk.
  mount -t tmpfs -o size=4g,mode=0755 soko-e2e-pool "$E2E_WORK/pool"
  mkdir -p "$E2E_WORK/kubelet/plugins"
  e2e_make_pki

  local etcd_port peer_port
  etcd_port=$(e2e_free_port) peer_port=$(e2e_free_port) E2E_API_PORT=$(e2e_free_port)
  e2e_spawn etcd "$E2E_BIN/etcd" --name e2e --data-dir "$E2E_WORK/etcd" \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
    --initial-cluster "e2e=http://127.0.0.1:$peer_port" --unsafe-no-fsync --log-level warn

  local pki=$E2E_WORK/pki
  e2e_spawn kube-apiserver "$E2E_BIN/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$etcd_port" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$E2E_API_PORT" \
    --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
    --client-ca-file "$pki/ca.crt" --authorization-mode RBAC --allow-privileged=true \
    --service-account-issuer https://kubernetes.default.svc \
    --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
    --service-cluster-ip-range 10.96.0.0/24 --cert-dir "$pki" --v 1
  e2e_kubeconfig "$E2E_WORK/admin.kubeconfig" "$pki/admin.crt" "$pki/admin.key"
  export KUBECONFIG=$E2E_WORK/admin.kubeconfig
  wait_until 180 kc get --raw /readyz || die "kube-apiserver not ready in 180 s"

  # Only what a storage flow needs: PV binding, PV/PVC protection, namespace deletion, GC.
  e2e_spawn kube-controller-manager "$E2E_BIN/kube-controller-manager" \
    --kubeconfig "$E2E_WORK/admin.kubeconfig" --leader-elect=false --secure-port 0 \
    --controllers persistentvolume-binder-controller,persistentvolumeclaim-protection-controller,persistentvolume-protection-controller,namespace-controller,garbage-collector-controller \
    --v 1

  kc apply -f "$E2E_ROOT/crd/src/generated/crds/storageclusters.soko.dev-v1.yml" >/dev/null
  # All of them: snapshot-controller v8 waits (with a growing back-off, ~30 s) for the
  # VolumeGroupSnapshot API before it starts, even though Soko does not use group snapshots.
  kc apply -f "$E2E_BIN/../crds/snapshot/" >/dev/null
  kc wait --for condition=Established --timeout 60s crd --all >/dev/null ||
    die "CRDs not established"

  # Distributed snapshotting: the controller labels each VolumeSnapshotContent with the node of
  # its volume, so that the csi-snapshotter running with --node-deployment on that node takes it.
  # Clusters that install Soko need their snapshot-controller started with this flag.
  e2e_spawn snapshot-controller "$E2E_BIN/snapshot-controller" \
    --kubeconfig "$E2E_WORK/admin.kubeconfig" --leader-election=false \
    --enable-distributed-snapshotting --v 2

  kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata:
  name: $E2E_NODE
  labels:
    kubernetes.io/hostname: $E2E_NODE
    kubernetes.io/os: linux
    topology.soko.dev/node: $E2E_NODE
EOF

  local health_port
  health_port=$(e2e_free_port)
  e2e_spawn operator java -jar "$E2E_ROOT/operator/target/soko-operator.jar" run \
    --kubeconfig "$E2E_WORK/admin.kubeconfig" --no-leader-election \
    --health-address "127.0.0.1:$health_port"
  E2E_OPERATOR_HEALTH=http://127.0.0.1:$health_port
  wait_until 180 curl -fsS "$E2E_OPERATOR_HEALTH/readyz" || die "operator not ready in 180 s"
}

# Prints the args of container $3 of $2 (daemonset/NAME or deployment/NAME) in namespace $1, one
# per line.
e2e_container_args() {
  kc -n "$1" get "$2" -o \
    "jsonpath={range .spec.template.spec.containers[?(@.name==\"$3\")].args[*]}{@}{\"\\n\"}{end}"
}

# Rewrites container args for a local process: the pod's socket path becomes a local one, the
# downward-API node name is substituted, the kubelet directory (whose filesystem plays the node's
# root filesystem) becomes one in the work dir, the driver's health endpoint (built-in
# registration) and a sidecar's --http-endpoint (the resizer's leader-election health) move to a
# free loopback port (the processes share this host's network) and the registration directory to
# one in the work dir (no kubelet watches it).
e2e_localise_args() {
  local socket=$1 arg
  while IFS= read -r arg; do
    [ -n "$arg" ] || continue
    arg=${arg//unix:\/\/\/csi\/csi.sock/unix:\/\/$socket}
    arg=${arg//\/csi\/csi.sock/$socket}
    arg=${arg//\$(NODE_NAME)/$E2E_NODE}
    case $arg in
      --health-address=*) arg=--health-address=127.0.0.1:$(e2e_free_port) ;;
      --kubelet-dir=*) arg=--kubelet-dir=$E2E_WORK/kubelet ;;
      --http-endpoint=*) arg=--http-endpoint=127.0.0.1:$(e2e_free_port) ;;
      --registration-dir=*)
        mkdir -p "$E2E_WORK/registration"
        arg=--registration-dir=$E2E_WORK/registration
        ;;
    esac
    printf '%s\n' "$arg"
  done
}

# A kubeconfig that authenticates as ServiceAccount $2 in namespace $1, so that each sidecar runs
# with exactly the RBAC the operator gave it.
e2e_sa_kubeconfig() {
  local file=$E2E_WORK/sa-$1-$2.kubeconfig token
  token=$(kc -n "$1" create token "$2" --duration 2h) || die "cannot get a token for $1/$2"
  e2e_kubeconfig "$file" "token:$token"
  printf '%s\n' "$file"
}

e2e_node_up() {
  local cluster=$1 ns ds dep node_sa ctrl_sa driver_name ds_uid
  ns=$(kc get storagecluster "$cluster" -o jsonpath='{.spec.namespace}')
  driver_name=$(kc get storagecluster "$cluster" -o jsonpath='{.spec.driver.name}')
  ds=daemonset/$cluster-node dep=deployment/$cluster-controller
  node_sa=$(kc -n "$ns" get "$ds" -o jsonpath='{.spec.template.spec.serviceAccountName}')
  ctrl_sa=$(kc -n "$ns" get "$dep" -o jsonpath='{.spec.template.spec.serviceAccountName}')
  ds_uid=$(kc -n "$ns" get "$ds" -o jsonpath='{.metadata.uid}')

  # The node plugin Pod the DaemonSet would have: the provisioner looks it up (POD_NAME) to make
  # its DaemonSet the owner of the CSIStorageCapacity objects.
  local pod=$cluster-node-e2e labels
  labels=$(kc -n "$ns" get "$ds" -o jsonpath='{.spec.selector.matchLabels}')
  kc apply -f - >/dev/null <<EOF
{"apiVersion": "v1", "kind": "Pod",
 "metadata": {"name": "$pod", "namespace": "$ns", "labels": $labels,
   "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "$cluster-node",
     "uid": "$ds_uid", "controller": true}]},
 "spec": {"nodeName": "$E2E_NODE", "serviceAccountName": "$node_sa",
   "containers": [{"name": "placeholder", "image": "none.invalid/no-kubelet-here"}]}}
EOF
  # What node-driver-registrar + kubelet would register (NodeGetInfo of the driver).
  kc apply -f - >/dev/null <<EOF
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata:
  name: $E2E_NODE
spec:
  drivers:
  - name: $driver_name
    nodeID: $E2E_NODE
    topologyKeys: [topology.soko.dev/node]
EOF

  local node_kc ctrl_kc node_sock=$E2E_WORK/csi-node/csi.sock ctrl_sock=$E2E_WORK/csi-controller/csi.sock
  node_kc=$(e2e_sa_kubeconfig "$ns" "$node_sa")
  ctrl_kc=$(e2e_sa_kubeconfig "$ns" "$ctrl_sa")
  local -a driver_args ctrl_args prov_args snap_args resizer_args
  mapfile -t driver_args < <(e2e_container_args "$ns" "$ds" soko-driver | e2e_localise_args "$node_sock")
  mapfile -t ctrl_args < <(e2e_container_args "$ns" "$dep" soko-driver | e2e_localise_args "$ctrl_sock")
  mapfile -t prov_args < <(e2e_container_args "$ns" "$ds" csi-provisioner | e2e_localise_args "$node_sock")
  mapfile -t snap_args < <(e2e_container_args "$ns" "$ds" csi-snapshotter | e2e_localise_args "$node_sock")
  mapfile -t resizer_args < <(e2e_container_args "$ns" "$dep" csi-resizer | e2e_localise_args "$ctrl_sock")
  ((${#driver_args[@]} && ${#prov_args[@]} && ${#resizer_args[@]})) ||
    die "the operator's DaemonSet/Deployment lack driver, provisioner or resizer containers"
  # shellcheck disable=SC2034 # read by the scripts that source this file
  E2E_DRIVER_ARGS=("${driver_args[@]}")

  e2e_spawn driver-node "$E2E_ROOT/driver/bin/soko-driver" "${driver_args[@]}"
  e2e_spawn driver-controller "$E2E_ROOT/driver/bin/soko-driver" "${ctrl_args[@]}"
  wait_for_socket "$node_sock" 120 || die "node driver socket missing after 120 s"
  wait_for_socket "$ctrl_sock" 120 || die "controller driver socket missing after 120 s"

  e2e_spawn csi-provisioner env NODE_NAME="$E2E_NODE" NAMESPACE="$ns" POD_NAME="$pod" \
    "$E2E_BIN/csi-provisioner" "${prov_args[@]}" --kubeconfig "$node_kc"
  if ((${#snap_args[@]})); then
    e2e_spawn csi-snapshotter env NODE_NAME="$E2E_NODE" \
      "$E2E_BIN/csi-snapshotter" "${snap_args[@]}" --kubeconfig "$node_kc"
  fi
  e2e_spawn csi-resizer env NODE_NAME="$E2E_NODE" \
    "$E2E_BIN/csi-resizer" "${resizer_args[@]}" --kubeconfig "$ctrl_kc"
}

# What the kubelet would do for a namespace being deleted: confirm the termination of its pods on
# our node (the placeholder node plugin Pod), then report whether namespace $1 is gone.
e2e_namespace_gone_with_kubelet() {
  kc -n "$1" delete pods --all --grace-period 0 --force --wait=false >/dev/null 2>&1 || true
  ! kc get namespace "$1" >/dev/null 2>&1
}

# Stops the processes in reverse start order, then releases mounts and loop devices and removes the
# work dir. With E2E_FAILED=1 the logs are kept (their path is printed).
e2e_cluster_down() {
  local i j entry pid
  # One at a time, newest first: the sidecars and the operator go while the API server still
  # answers, and the API server goes while etcd still answers (else it waits for it).
  for ((i = ${#E2E_PIDS[@]} - 1; i >= 0; i--)); do
    entry=${E2E_PIDS[i]} pid=${entry%%:*}
    kill "$pid" 2>/dev/null || true
    # Anything that ignores SIGTERM for 15 s is killed.
    for ((j = 0; j < 150; j++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  E2E_PIDS=()
  [ -n "${E2E_WORK:-}" ] && [ -d "$E2E_WORK" ] || return 0
  release_mounts_and_loops "$E2E_WORK"
  if [ "$E2E_FAILED" = 1 ]; then
    local keep
    keep=$(mktemp -d /tmp/soko-e2e-logs.XXXXXX)
    cp -r "$E2E_WORK/logs/." "$keep/"
    printf 'logs kept in %s\n' "$keep" >&2
  fi
  rm -rf "$E2E_WORK"
}
