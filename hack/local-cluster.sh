#!/usr/bin/env bash
# A real single-node Kubernetes cluster on this machine: etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, snapshot-controller, containerd 2.x with Debian's runc and CNI plugins, kubelet and
# kube-proxy, all built from the pinned sources (hack/versions.env, hack/tools.sh). Needs root.
#
#   hack/local-cluster.sh up        start it (after removing whatever a killed run left); prints KUBECONFIG
#   hack/local-cluster.sh down      stop it and remove everything it made; checks that nothing is left
#   hack/local-cluster.sh images    (re)build the node's images: pause, CSI sidecars, busybox
#   hack/local-cluster.sh env       print the variables a client needs (KUBECONFIG, ...)
#   hack/local-cluster.sh restart containerd|kubelet     restart one of the node's services
#   hack/local-cluster.sh ctr ARGS...                    containerd's ctr on the node (k8s.io namespace)
#   hack/local-cluster.sh second-node NS DAEMONSET       a second, kubelet-less node with Soko's
#                                                        driver and provisioner as processes; run
#                                                        again, it restarts them with the
#                                                        DaemonSet's current args
#   hack/local-cluster.sh second-node-down               remove the second node again
#   hack/local-cluster.sh statfs NODE PATH               statfs(2) of PATH as NODE sees it
#   hack/local-cluster.sh mount-disk NODE PATH SIZE [FS] mount a fresh disk at PATH on NODE: FS xfs
#                                                        (default) or btrfs (with quotas enabled)
#   hack/local-cluster.sh umount-disk NODE PATH          and unmount it again
#
# Network rule: every cluster process and every pod runs inside the network namespace $NETNS. It has
# loopback, one veth whose peer sits in a second, empty namespace (the node's address lives there),
# the pods' bridge, and no default route: nothing the cluster sends can leave the machine. The host
# reaches the API server only through a Unix socket relayed to 127.0.0.1:$API_HOST_PORT.
# Mounts: the processes share one private mount namespace (a slave of the host's), so no volume,
# loop filesystem or pod netns file shows up in the host's mount table. /var/lib/kubelet and the
# runtime's folders are bind mounts from $STATE there, and the pool filesystem (XFS with reflink,
# on a loop device) is mounted at /var/lib/soko.
#
# Environment: SOKO_CLUSTER_DIR (state, default /var/tmp/soko-cluster), SOKO_CLUSTER_API_PORT (the
# host's loopback port of the API server, default 16443), SOKO_CLUSTER_POOL_SIZE (default 8G).
set -euo pipefail
SOKO_LOG_TAG=cluster
source "$(dirname "$0")/lib.sh"
# shellcheck source=versions.env
source "$(dirname "$0")/versions.env"

ROOT=$(soko_root)
BIN=${SOKO_CACHE:-$HOME/.cache/soko}/bin
IMAGES_DIR=${SOKO_CACHE:-$HOME/.cache/soko}/node-images
STATE=${SOKO_CLUSTER_DIR:-/var/tmp/soko-cluster}
API_HOST_PORT=${SOKO_CLUSTER_API_PORT:-16443}
POOL_SIZE=${SOKO_CLUSTER_POOL_SIZE:-8G}
NODE=soko-node
NETNS=soko-cluster
SINK=soko-cluster-sink
MNT_DIR=/run/soko-cluster
MNT_NS=$MNT_DIR/mnt
NODE_IP=10.250.0.1
SERVICE_CIDR=10.0.0.0/24
POD_CIDR=10.244.0.0/24
POD_GATEWAY=10.244.0.1
BRIDGE=sokocni0
# The name under which the node's images are imported; the StorageCluster and the chart point their
# image registry at it, as an air-gapped cluster points them at its own registry.
IMAGE_REGISTRY=soko.local
# Folders the node's processes expect at their usual places, each a bind mount from $STATE/root.
NODE_DIRS=(/var/lib/kubelet /var/lib/containerd /var/log/pods /var/log/containers /var/lib/cni)
# The kubelet sets these host-wide (they are not per network namespace); down puts them back.
KUBELET_SYSCTLS=(kernel.panic kernel.panic_on_oops vm.overcommit_memory)
NODE_TOOLS=(etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl
  containerd containerd-shim-runc-v2 ctr csi-provisioner csi-resizer csi-snapshotter snapshot-controller)

in_ns() { nsenter --mount="$MNT_NS" --net="/run/netns/$NETNS" -- "$@"; }
kc() { in_ns "$BIN/kubectl" --kubeconfig "$STATE/pki/admin.kubeconfig" "$@"; }

# Starts "$@" inside the cluster's namespaces, detached, logging to $STATE/logs/NAME.log; the pid
# file holds the process's own pid (nsenter execs it). START_MNT names another mount namespace (the
# second node's).
start() {
  local name=$1
  shift
  # The cluster's own kubeconfigs only: a client's KUBECONFIG (the host's view) must not leak in.
  env -u KUBECONFIG setsid nsenter --mount="${START_MNT:-$MNT_NS}" --net="/run/netns/$NETNS" -- "$@" \
    >"$STATE/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$STATE/pids/$name.pid"
}

check_tools() {
  local tool missing=()
  for tool in "${NODE_TOOLS[@]}"; do [ -x "$BIN/$tool" ] || missing+=("$tool"); done
  ((${#missing[@]} == 0)) || die "missing tools in $BIN: ${missing[*]} (run: hack/tools.sh ${missing[*]})"
  [ -d "$BIN/../crds/snapshot" ] || die "VolumeSnapshot CRDs missing (run: hack/tools.sh snapshot-crds)"
  for tool in runc nsenter unshare socat iptables mkfs.xfs; do
    command -v "$tool" >/dev/null || die "$tool is missing (run: hack/deps.sh)"
  done
  [ -x /usr/lib/cni/bridge ] || die "the CNI plugins are missing (run: hack/deps.sh)"
}

# --- images ---------------------------------------------------------------------------------------

sidecar_image() { printf '%s/sig-storage/%s:%s\n' "$IMAGE_REGISTRY" "$1" "$2"; }

# The node's own images, as OCI archives in $IMAGES_DIR: a pause image of the project's own, the CSI
# sidecars from the pinned binaries (static Go programs need no root filesystem), and busybox
# (Debian's static build) for test workloads.
build_node_images() {
  local tmp name version
  mkdir -p "$IMAGES_DIR"
  tmp=$(mktemp -d)
  gcc -static -Os -s -o "$tmp/pause" "$ROOT/images/pause/pause.c" || die "cannot build the pause program"
  python3 "$ROOT/hack/oci-image.py" --name "$IMAGE_REGISTRY/pause:3.10" --out "$IMAGES_DIR/pause.oci.tar" \
    --file "$tmp/pause:/pause" --entrypoint /pause
  for name in csi-provisioner csi-resizer csi-snapshotter; do
    case $name in
    csi-provisioner) version=$CSI_PROVISIONER_VERSION ;;
    csi-resizer) version=$CSI_RESIZER_VERSION ;;
    csi-snapshotter) version=$CSI_SNAPSHOTTER_VERSION ;;
    esac
    python3 "$ROOT/hack/oci-image.py" --name "$(sidecar_image "$name" "$version")" \
      --out "$IMAGES_DIR/$name.oci.tar" --file "$(readlink -f "$BIN/$name"):/$name" --entrypoint "/$name"
  done
  local -a links=()
  while read -r name; do
    [ "$name" = busybox ] || links+=(--symlink "/bin/$name:busybox")
  done < <(/bin/busybox --list)
  python3 "$ROOT/hack/oci-image.py" --name "$IMAGE_REGISTRY/busybox:1" --out "$IMAGES_DIR/busybox.oci.tar" \
    --file /bin/busybox:/bin/busybox "${links[@]}" --dir /tmp:1777 --entrypoint /bin/sh
  rm -rf "$tmp"
}

# The archives imported into the runtime: the node images and Soko's own (hack/images.sh), renamed
# into $IMAGE_REGISTRY.
import_images() {
  local archive version name ref
  for archive in "$IMAGES_DIR"/*.oci.tar; do
    ctr images import --platform linux/amd64 "$archive" >/dev/null 2>>"$STATE/logs/ctr.log" ||
      die "cannot import $archive"
  done
  version=$(grep -m1 -oP '(?<=<version>)[^<]+' "$ROOT/pom.xml")
  for name in driver operator; do
    archive=$ROOT/target/images/soko-$name-$version.oci.tar
    [ -f "$archive" ] || die "$archive is missing (run: make images)"
    ctr images import --platform linux/amd64 "$archive" >/dev/null 2>>"$STATE/logs/ctr.log" ||
      die "cannot import $archive"
    # podman names the image in the archive after its build (localhost/..., or IMAGE_REGISTRY).
    ref=$(tar -xOf "$archive" index.json |
      python3 -c 'import json,sys; print(json.load(sys.stdin)["manifests"][0]["annotations"]["org.opencontainers.image.ref.name"])')
    { ctr images tag --force "$ref" "$IMAGE_REGISTRY/soko-$name:$version" &&
      ctr images rm "$ref"; } >/dev/null 2>>"$STATE/logs/ctr.log" ||
      die "cannot name $ref $IMAGE_REGISTRY/soko-$name:$version"
  done
}

# --- certificates ---------------------------------------------------------------------------------

# cert NAME SUBJECT EKU [SAN]: a leaf certificate signed by the cluster CA.
cert() {
  local name=$1 subject=$2 eku=$3 san=${4:-}
  openssl req -newkey rsa:2048 -nodes -keyout "$name.key" -out "$name.csr" -subj "$subject" 2>/dev/null
  {
    echo "extendedKeyUsage=$eku"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    [ -z "$san" ] || echo "subjectAltName=$san"
  } >"$name.ext"
  openssl x509 -req -in "$name.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 7 \
    -extfile "$name.ext" -out "$name.crt" 2>/dev/null
  rm -f "$name.csr" "$name.ext"
}

# kubeconfig FILE CERT SERVER
kubeconfig() {
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: soko-local
  cluster: {server: "$3", certificate-authority: $STATE/pki/ca.crt}
users:
- name: $2
  user: {client-certificate: $STATE/pki/$2.crt, client-key: $STATE/pki/$2.key}
contexts:
- name: soko-local
  context: {cluster: soko-local, user: $2}
current-context: soko-local
EOF
}

make_pki() {
  mkdir -p "$STATE/pki"
  (
    cd "$STATE/pki"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 7 \
      -subj /CN=soko-local-ca -addext basicConstraints=critical,CA:TRUE \
      -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
    cert apiserver /CN=kube-apiserver serverAuth \
      "DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost,IP:127.0.0.1,IP:10.0.0.1,IP:$NODE_IP"
    cert admin "/O=system:masters/CN=soko-local-admin" clientAuth
    cert controller-manager /CN=system:kube-controller-manager clientAuth
    cert scheduler /CN=system:kube-scheduler clientAuth
    cert kube-proxy /CN=system:kube-proxy clientAuth
    cert kubelet "/O=system:nodes/CN=system:node:$NODE" clientAuth
    cert apiserver-kubelet-client /CN=kube-apiserver-kubelet-client clientAuth
    cert kubelet-serving "/CN=$NODE" serverAuth "DNS:$NODE,DNS:localhost,IP:127.0.0.1,IP:$NODE_IP"
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
  ) || die "openssl failed to make the certificates"
  local name
  for name in admin controller-manager scheduler kube-proxy kubelet; do
    kubeconfig "$STATE/pki/$name.kubeconfig" "$name" https://127.0.0.1:6443
  done
  # The host's view: the same admin, through the relay on the host's loopback.
  kubeconfig "$STATE/kubeconfig" admin "https://127.0.0.1:$API_HOST_PORT"
}

# --- namespaces -----------------------------------------------------------------------------------

save_sysctls() {
  # Kept across a killed run: the first saved values are the host's own.
  [ -f "$STATE/sysctls.saved" ] && return
  local key
  for key in "${KUBELET_SYSCTLS[@]}"; do echo "$key=$(sysctl -n "$key")"; done >"$STATE/sysctls.saved.tmp"
  mv "$STATE/sysctls.saved.tmp" "$STATE/sysctls.saved"
}

make_netns() {
  ip netns add "$NETNS"
  ip netns add "$SINK"
  ip -n "$NETNS" link set lo up
  ip -n "$NETNS" link add soko0 type veth peer name soko0-sink netns "$SINK"
  ip -n "$NETNS" addr add "$NODE_IP/24" dev soko0
  ip -n "$NETNS" link set soko0 up
  ip -n "$SINK" link set soko0-sink up
  # Host-network clients (the kubelet, a hostNetwork pod) reach ClusterIPs only with a route
  # to them; kube-proxy then rewrites the destination. Not a default route.
  ip -n "$NETNS" route add "$SERVICE_CIDR" dev soko0
}

make_mountns() {
  local dir
  mkdir -p "$MNT_DIR"
  mount --bind "$MNT_DIR" "$MNT_DIR"
  mount --make-private "$MNT_DIR"
  touch "$MNT_NS"
  unshare --mount="$MNT_NS" --propagation slave true
  : >"$STATE/created-dirs"
  for dir in "${NODE_DIRS[@]}" /run/containerd /var/lib/soko; do
    [ -d "$dir" ] || { mkdir -p "$dir" && echo "$dir" >>"$STATE/created-dirs"; }
  done
  truncate -s "$POOL_SIZE" "$STATE/pool.img"
  mkfs.xfs -q -m reflink=1 "$STATE/pool.img"
  # shellcheck disable=SC2016 # a script for the node's mount namespace, with its own arguments
  nsenter --mount="$MNT_NS" -- bash -euc '
    state=$1; shift
    # Shared inside, so that the node plugin'\''s Bidirectional mounts reach the kubelet and the pods.
    mount --make-rshared /
    for dir in "$@"; do mkdir -p "$state/root$dir" && mount --bind "$state/root$dir" "$dir"; done
    mount -t tmpfs -o mode=0711 tmpfs /run/containerd
    mount -o loop "$state/pool.img" /var/lib/soko
  ' _ "$STATE" "${NODE_DIRS[@]}"
}

# --- processes ------------------------------------------------------------------------------------

write_configs() {
  mkdir -p "$STATE/etc" "$STATE/cni/net.d"
  cat >"$STATE/etc/admission.yaml" <<EOF
apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  configuration:
    apiVersion: pod-security.admission.config.k8s.io/v1
    kind: PodSecurityConfiguration
    # As on hardened clusters: a namespace without labels admits only baseline pods.
    defaults: {enforce: baseline, enforce-version: latest, warn: baseline, warn-version: latest}
    exemptions: {namespaces: [kube-system]}
EOF
  cat >"$STATE/etc/scheduler.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: $STATE/pki/scheduler.kubeconfig}
leaderElection: {leaderElect: false}
EOF
  cat >"$STATE/etc/containerd.toml" <<EOF
version = 3
root = "/var/lib/containerd"
state = "/run/containerd"
# The runtime may not lower its own OOM score: root here lacks CAP_SYS_RESOURCE.
oom_score = 0
[grpc]
  address = "/run/containerd/containerd.sock"
[ttrpc]
  address = "/run/containerd/containerd.sock.ttrpc"
[metrics]
  address = ""
[plugins]
  [plugins.'io.containerd.cri.v1.images']
    snapshotter = 'overlayfs'
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = '$IMAGE_REGISTRY/pause:3.10'
    [plugins.'io.containerd.cri.v1.images'.registry]
      config_path = ''
  [plugins.'io.containerd.cri.v1.runtime']
    enable_selinux = false
    # No AppArmor on this kernel.
    disable_apparmor = true
    # Without CAP_SYS_RESOURCE runc cannot set a negative oom_score_adj: every sandbox would fail
    # with "can't get final child's PID from pipe".
    restrict_oom_score_adj = true
    # Pod netns files in the runtime's tmpfs, not in the host's /run/netns.
    netns_mounts_under_state_dir = true
    # The hybrid cgroup layout here has no hugetlb controller in the v1 hierarchies.
    tolerate_missing_hugetlb_controller = true
    disable_hugetlb_controller = true
    enable_criu = false
    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = 'runc'
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
        runtime_type = 'io.containerd.runc.v2'
        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
          # Debian's runc (crun fails on the hybrid cgroup layout); cgroupfs, no systemd here.
          BinaryName = '/usr/sbin/runc'
          SystemdCgroup = false
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = ['/usr/lib/cni']
      # Its own folder: the host's /etc/cni/net.d may hold other networks (podman's).
      conf_dir = '$STATE/cni/net.d'
      max_conf_num = 1
  [plugins.'io.containerd.grpc.v1.cri']
    # kubectl exec/logs/port-forward stream through the node's loopback.
    stream_server_address = '127.0.0.1'
    stream_server_port = '0'
EOF
  cat >"$STATE/cni/net.d/10-soko.conflist" <<EOF
{"cniVersion": "1.0.0", "name": "soko-local", "plugins": [
  {"type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "dataDir": "$STATE/cni/ipam",
            "ranges": [[{"subnet": "$POD_CIDR", "gateway": "$POD_GATEWAY"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "portmap", "capabilities": {"portMappings": true}}]}
EOF
  cat >"$STATE/etc/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# This machine's cgroups are v1 (hybrid layout); without this the kubelet refuses to start.
failCgroupV1: false
cgroupDriver: cgroupfs
failSwapOn: false
# Root lacks CAP_SYS_RESOURCE: the default -999 cannot be written, and the nofile hard limit is 20000.
oomScoreAdj: 0
maxOpenFiles: 20000
containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
address: $NODE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
tlsCertFile: $STATE/pki/kubelet-serving.crt
tlsPrivateKeyFile: $STATE/pki/kubelet-serving.key
rotateCertificates: false
serverTLSBootstrap: false
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $STATE/pki/ca.crt}
authorization: {mode: Webhook}
# No resolver for pods: no DNS query may leave the machine.
resolvConf: ""
# A scratch node on a shared disk: never evict or collect images for disk pressure.
imageGCHighThresholdPercent: 100
evictionHard: {nodefs.available: "0%", nodefs.inodesFree: "0%", imagefs.available: "0%"}
EOF
  cat >"$STATE/etc/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $STATE/pki/kube-proxy.kubeconfig}
mode: iptables
hostnameOverride: $NODE
clusterCIDR: $POD_CIDR
bindAddress: 127.0.0.1
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
oomScoreAdj: 0
# Leave the host-wide conntrack sysctls alone.
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
}

start_control_plane() {
  local pki=$STATE/pki
  start etcd "$BIN/etcd" --name soko-local --data-dir "$STATE/etcd" \
    --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
    --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
    --initial-cluster soko-local=http://127.0.0.1:2380 --listen-metrics-urls http://127.0.0.1:2381 \
    --unsafe-no-fsync --log-level warn
  # --advertise-address: the namespace has no default route to pick an address from.
  start kube-apiserver "$BIN/kube-apiserver" --etcd-servers http://127.0.0.1:2379 \
    --bind-address 0.0.0.0 --secure-port 6443 --advertise-address "$NODE_IP" \
    --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
    --client-ca-file "$pki/ca.crt" \
    --kubelet-client-certificate "$pki/apiserver-kubelet-client.crt" \
    --kubelet-client-key "$pki/apiserver-kubelet-client.key" \
    --kubelet-certificate-authority "$pki/ca.crt" --kubelet-preferred-address-types InternalIP \
    --service-account-issuer https://kubernetes.default.svc --service-account-key-file "$pki/sa.pub" \
    --service-account-signing-key-file "$pki/sa.key" --service-cluster-ip-range "$SERVICE_CIDR" \
    --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction,PodSecurity \
    --admission-control-config-file "$STATE/etc/admission.yaml" --allow-privileged=true \
    --profiling=false --v 1
  wait_until 120 kc get --raw /readyz || die "kube-apiserver not ready in 120 s (see $STATE/logs/kube-apiserver.log)"
  # The host's loopback reaches the API server through a Unix socket: nothing listens outside.
  start api-relay-ns socat "UNIX-LISTEN:$STATE/api.sock,fork,unlink-early,mode=600" TCP:127.0.0.1:6443
  setsid socat "TCP-LISTEN:$API_HOST_PORT,bind=127.0.0.1,fork,reuseaddr" "UNIX-CONNECT:$STATE/api.sock" \
    >"$STATE/logs/api-relay-host.log" 2>&1 </dev/null &
  echo $! >"$STATE/pids/api-relay-host.pid"
  # kubectl logs/exec: the API server's client certificate may use the kubelet's API.
  kc create clusterrolebinding soko-local-apiserver-kubelet --clusterrole system:kubelet-api-admin \
    --user kube-apiserver-kubelet-client >/dev/null
  start kube-controller-manager "$BIN/kube-controller-manager" \
    --kubeconfig "$pki/controller-manager.kubeconfig" \
    --authentication-kubeconfig "$pki/controller-manager.kubeconfig" \
    --authorization-kubeconfig "$pki/controller-manager.kubeconfig" --bind-address 127.0.0.1 \
    --leader-elect=false --use-service-account-credentials=true \
    --service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" \
    --cluster-signing-cert-file "$pki/ca.crt" --cluster-signing-key-file "$pki/ca.key" \
    --service-cluster-ip-range "$SERVICE_CIDR" --profiling=false --v 1
  start kube-scheduler "$BIN/kube-scheduler" --config "$STATE/etc/scheduler.yaml" \
    --authentication-kubeconfig "$pki/scheduler.kubeconfig" \
    --authorization-kubeconfig "$pki/scheduler.kubeconfig" --bind-address 127.0.0.1 --profiling=false
  kc apply -f "$BIN/../crds/snapshot/" >/dev/null
  kc wait --for condition=Established --timeout 60s crd --all >/dev/null || die "snapshot CRDs not established"
  # A cluster add-on, as on any cluster with snapshots. Distributed snapshotting: each
  # VolumeSnapshotContent is labelled with its volume's node for the node-local csi-snapshotter.
  start snapshot-controller "$BIN/snapshot-controller" --kubeconfig "$pki/admin.kubeconfig" \
    --leader-election=false --enable-distributed-snapshotting --v 2
}

run_containerd() {
  # containerd 2.x finds its shim on PATH: the pinned one, before anything Debian installed.
  start containerd env PATH="$(dirname "$(readlink -f "$BIN/containerd-shim-runc-v2")"):/usr/sbin:/usr/bin:/sbin:/bin" \
    "$BIN/containerd" --config "$STATE/etc/containerd.toml"
  wait_until 60 ctr version || die "containerd did not start (see $STATE/logs/containerd.log)"
}

run_kubelet() {
  save_sysctls
  start kubelet "$BIN/kubelet" --config "$STATE/etc/kubelet.yaml" \
    --kubeconfig "$STATE/pki/kubelet.kubeconfig" --hostname-override "$NODE" --node-ip "$NODE_IP" --v 2
}

ctr() { in_ns "$BIN/ctr" --address /run/containerd/containerd.sock -n k8s.io "$@"; }

# Stops one of the node's services and starts it again, as an admin restarts a node's kubelet or
# runtime: the pods (their shims) go on running.
restart() {
  local name=$1 pid
  case $name in containerd | kubelet) ;; *) die "restart: containerd or kubelet, not '$name'" ;; esac
  pid=$(cat "$STATE/pids/$name.pid")
  kill -TERM "$pid" 2>/dev/null || true
  wait_until 30 all_gone "$pid" || kill -KILL "$pid" 2>/dev/null || true
  wait_until 10 all_gone "$pid" || die "$name (pid $pid) does not stop"
  mv "$STATE/logs/$name.log" "$STATE/logs/$name.$(date +%s).log"
  "run_$name"
  [ "$name" = kubelet ] || return 0
  wait_until 120 node_ready || die "node $NODE not Ready in 120 s after the kubelet restarted"
}

start_node() {
  run_containerd
  import_images
  run_kubelet
  start kube-proxy "$BIN/kube-proxy" --config "$STATE/etc/kube-proxy.yaml"
  wait_until 120 node_ready || die "node $NODE not Ready in 120 s (see $STATE/logs/kubelet.log)"
  wait_until 60 kc -n default get serviceaccount default || die "no default ServiceAccount"
}

node_ready() {
  [ "$(kc get node "$NODE" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')" = True ]
}

# --- a second, kubelet-less node ------------------------------------------------------------------

# A second node for capacity-aware placement and per-node pools, without a kubelet of its own (one
# kubelet per machine here): a Node object tainted so that no DaemonSet pod is scheduled there, the
# CSINode that the kubelet would write, and the node plugin's driver and external-provisioner as
# processes, with the args and env of the StorageCluster's DaemonSet and the node plugin's
# ServiceAccount. Like the first node it has a mount namespace of its own that outlives its
# processes ($SECOND_NODE_NS, private: nothing mounted there shows anywhere else), with its own pool
# filesystem (a sparse XFS image) at the first node's pool mount /var/lib/soko, and each pool
# directory made as the kubelet's hostPath DirectoryOrCreate makes it. Its kubelet directory is on
# the host's disk, so the driver's root-filesystem check (allowRootFilesystem=false) runs here too.
# Pods that tolerate the taint are placed there by the real scheduler; nothing runs them. Run again,
# it restarts the processes with the DaemonSet's current args (as a rollout restarts a node plugin)
# and keeps the namespace, its mounts and the pool's contents.
SECOND_NODE=soko-node-b
SECOND_NODE_NS=$MNT_DIR/$SECOND_NODE.mnt
POOL_MOUNT=/var/lib/soko

# second_node_up NAMESPACE DAEMONSET
second_node_up() {
  local ns=$1 ds=$2 driver sa token dir=$STATE/$SECOND_NODE arg pool
  driver=$(kc get csidriver -o 'jsonpath={.items[0].metadata.name}')
  [ -n "$driver" ] || die "second node: no CSIDriver yet (install Soko first)"
  sa=$(kc -n "$ns" get daemonset "$ds" -o 'jsonpath={.spec.template.spec.serviceAccountName}')
  stop_second_node
  mkdir -p "$dir/kubelet/plugins"
  if [ ! -e "$SECOND_NODE_NS" ]; then
    # Sparse: room for the E2E's 12Gi claim, a few MiB on the host's disk.
    truncate -s 16G "$dir/pool.img"
    mkfs.xfs -q -f -m reflink=1 "$dir/pool.img"
    touch "$SECOND_NODE_NS"
    unshare --mount="$SECOND_NODE_NS" --propagation private mount -o loop "$dir/pool.img" "$POOL_MOUNT"
  fi
  kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata:
  name: $SECOND_NODE
  labels: {kubernetes.io/hostname: $SECOND_NODE, kubernetes.io/os: linux, topology.soko.dev/node: $SECOND_NODE}
spec:
  taints: [{key: soko.dev/kubelet-less, value: "true", effect: NoSchedule}]
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: $SECOND_NODE}
spec:
  drivers: [{name: $driver, nodeID: $SECOND_NODE, topologyKeys: [topology.soko.dev/node]}]
EOF
  # What a kubelet would report: room for pods (the scheduler counts them), and Ready once.
  kc patch node "$SECOND_NODE" --subresource status --type merge -p '{"status": {
    "capacity": {"cpu": "2", "memory": "4Gi", "pods": "110"},
    "allocatable": {"cpu": "2", "memory": "4Gi", "pods": "110"},
    "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletLess",
      "message": "no kubelet: pods are placed here, never run"}]}}' >/dev/null
  token=$(kc -n "$ns" create token "$sa" --duration 2h)
  printf '%s' "$token" >"$dir/token"
  cat >"$dir/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: soko-local, cluster: {server: "https://127.0.0.1:6443", certificate-authority: $STATE/pki/ca.crt}}]
users: [{name: $sa, user: {token: "$token"}}]
contexts: [{name: soko-local, context: {cluster: soko-local, user: $sa}}]
current-context: soko-local
EOF
  local -a driver_args=() driver_env=() prov_args=() pools=()
  local pool_path
  while IFS= read -r arg; do
    case $arg in
    --endpoint=*) arg=--endpoint=unix://$dir/csi.sock ;;
    --node-id=*) arg=--node-id=$SECOND_NODE ;;
    --kubelet-dir=*) arg=--kubelet-dir=$dir/kubelet ;;
    --pool=*)
      pool_path=${arg##*path=}
      pools+=("${pool_path%%,*}")
      ;;
    --kubelet-registration-path=* | --registration-dir=* | --health-address=* | --metrics-address=*) continue ;;
    esac
    driver_args+=("$arg")
  done < <(container_args "$ns" "$ds" soko-driver)
  # The driver's own env (its StorageCluster, say), and the API server as an in-cluster client
  # finds it, with the ServiceAccount's token: it reports its pools and watches its Node's labels.
  mapfile -t driver_env < <(container_env "$ns" "$ds" soko-driver)
  driver_env+=(SOKO_KUBE_API=https://127.0.0.1:6443 "SOKO_KUBE_TOKEN_FILE=$dir/token"
    "SOKO_KUBE_CA_FILE=$STATE/pki/ca.crt")
  while IFS= read -r arg; do
    case $arg in
    --csi-address=*) arg=--csi-address=$dir/csi.sock ;;
    # No pod of this node owns its CSIStorageCapacity objects.
    --capacity-ownerref-level=*) arg=--capacity-ownerref-level=-1 ;;
    esac
    prov_args+=("$arg")
  done < <(container_args "$ns" "$ds" csi-provisioner)
  for pool in "${pools[@]}"; do
    nsenter --mount="$SECOND_NODE_NS" -- mkdir -p "$pool"
  done
  rm -f "$dir/csi.sock"
  START_MNT=$SECOND_NODE_NS start "$SECOND_NODE-driver" env "${driver_env[@]}" \
    "$ROOT/driver/bin/soko-driver" "${driver_args[@]}"
  wait_until 60 test -S "$dir/csi.sock" || die "second node: the driver did not start (see $STATE/logs)"
  start "$SECOND_NODE-provisioner" env NODE_NAME="$SECOND_NODE" NAMESPACE="$ns" \
    "$BIN/csi-provisioner" "${prov_args[@]}" --kubeconfig "$dir/kubeconfig"
  log "node $SECOND_NODE: driver and provisioner running, pools ${pools[*]} on $dir/pool.img (XFS)"
}

# Stops the second node's processes; its mount namespace stays. Their logs are kept, renamed.
stop_second_node() {
  local name file pid
  for name in driver provisioner; do
    file=$STATE/pids/$SECOND_NODE-$name.pid
    [ -f "$file" ] || continue
    pid=$(cat "$file")
    kill -TERM "$pid" 2>/dev/null || true
    wait_until 30 all_gone "$pid" || kill -KILL "$pid" 2>/dev/null || true
    wait_until 10 all_gone "$pid" || die "$SECOND_NODE's $name (pid $pid) does not stop"
    rm -f "$file"
    [ ! -f "$STATE/logs/$SECOND_NODE-$name.log" ] ||
      mv "$STATE/logs/$SECOND_NODE-$name.log" "$STATE/logs/$SECOND_NODE-$name.$(date +%s%N).log"
  done
}

# Removes the second node: its processes, its Node and CSINode, its mount namespace and pool.
second_node_down() {
  stop_second_node
  kc delete node "$SECOND_NODE" --ignore-not-found >/dev/null
  kc delete csinode "$SECOND_NODE" --ignore-not-found >/dev/null
  release_second_node_ns
  rm -rf "${STATE:?}/$SECOND_NODE"
}

release_second_node_ns() {
  [ -e "$SECOND_NODE_NS" ] || return 0
  umount "$SECOND_NODE_NS" 2>/dev/null || umount -l "$SECOND_NODE_NS" 2>/dev/null || true
  rm -f "$SECOND_NODE_NS"
}

# --- a node's filesystems, as an admin sees them on that node -------------------------------------

# node_mnt NODE: the mount namespace in which NODE's processes see their files.
node_mnt() {
  case $1 in
  "$NODE") echo "$MNT_NS" ;;
  "$SECOND_NODE")
    [ -e "$SECOND_NODE_NS" ] || die "no node $SECOND_NODE (run second-node first)"
    echo "$SECOND_NODE_NS"
    ;;
  *) die "no node '$1' here ($NODE, $SECOND_NODE)" ;;
  esac
}

# statfs NODE PATH: statfs(2) of PATH on NODE: "fragment-size blocks free-blocks available-blocks".
statfs() {
  nsenter --mount="$(node_mnt "$1")" -- stat -f -c '%S %b %f %a' "$2"
}

# mount_disk NODE PATH SIZE [FS]: a fresh filesystem (a sparse image in $STATE/disks, on a loop
# device) mounted at PATH on NODE, as an admin mounts a new disk where a pool expects it. FS is xfs
# (with reflink; the default) or btrfs, prepared as a btrfs-subvolume pool needs it: quotas on.
mount_disk() {
  local mnt image fs=${4:-xfs}
  mnt=$(node_mnt "$1")
  image=$STATE/disks/$1$(tr / _ <<<"$2").img
  mkdir -p "$STATE/disks"
  rm -f "$image"
  truncate -s "$3" "$image"
  case $fs in
  xfs) mkfs.xfs -q -f -m reflink=1 "$image" ;;
  btrfs) mkfs.btrfs -q -f "$image" ;;
  *) die "mount-disk: unknown filesystem '$fs' (xfs or btrfs)" ;;
  esac
  # shellcheck disable=SC2016 # the inner script's own arguments
  nsenter --mount="$mnt" -- bash -euc 'mkdir -p "$2" && mount -o loop "$1" "$2"' _ "$image" "$2"
  if [ "$fs" = btrfs ]; then
    nsenter --mount="$mnt" -- btrfs quota enable "$2"
  fi
}

# umount_disk NODE PATH: unmounts what mount_disk mounted; its loop device goes with it.
umount_disk() {
  nsenter --mount="$(node_mnt "$1")" -- umount "$2"
  rm -f "$STATE/disks/$1$(tr / _ <<<"$2").img"
}

# Prints the args of container $3 of daemonset $2 in namespace $1, one per line.
container_args() {
  kc -n "$1" get daemonset "$2" -o \
    "jsonpath={range .spec.template.spec.containers[?(@.name==\"$3\")].args[*]}{@}{\"\\n\"}{end}"
}

# Prints the env of container $3 of daemonset $2 in namespace $1 that has plain values, NAME=VALUE
# one per line (values from the pod's own fields mean nothing to a process).
container_env() {
  kc -n "$1" get daemonset "$2" -o \
    "jsonpath={range .spec.template.spec.containers[?(@.name==\"$3\")].env[?(@.value)]}{.name}={.value}{\"\\n\"}{end}"
}

up() {
  require_root "the local cluster"
  check_tools
  [ -f "$IMAGES_DIR/pause.oci.tar" ] || build_node_images
  down quiet
  local started=$SECONDS
  mkdir -p "$STATE/logs" "$STATE/pids"
  rm -f "$STATE"/logs/*.log
  host_network >"$STATE/host-network.before"
  make_netns
  make_mountns
  make_pki
  write_configs
  start_control_plane
  start_node
  env_vars >"$STATE/env"
  log "node $NODE Ready in $((SECONDS - started)) s"
  env_vars
}

env_vars() {
  echo "export KUBECONFIG=$STATE/kubeconfig"
  echo "export SOKO_CLUSTER_DIR=$STATE"
  echo "export SOKO_CLUSTER_NODE=$NODE"
  echo "export SOKO_CLUSTER_IMAGE_REGISTRY=$IMAGE_REGISTRY"
}

# --- teardown -------------------------------------------------------------------------------------

# Every process of the cluster: those it started, those in its network namespace or its mount
# namespace (containerd's shims), those in the pods' cgroups, and all their descendants.
cluster_pids() {
  local f ns pid
  for f in "$STATE"/pids/*.pid; do [ -f "$f" ] && cat "$f"; done
  [ -e "/run/netns/$NETNS" ] && ip netns pids "$NETNS" 2>/dev/null
  if [ -e "$MNT_NS" ] && ns=$(stat -L -c %i "$MNT_NS" 2>/dev/null); then
    for f in /proc/[0-9]*/ns/mnt; do
      [ "$(stat -L -c %i "$f" 2>/dev/null)" = "$ns" ] && pid=${f#/proc/} && echo "${pid%%/*}"
    done
  fi
  find /sys/fs/cgroup/*/kubepods -name cgroup.procs -exec cat {} + 2>/dev/null || true
}

with_descendants() {
  local -A keep=()
  local pid ppid changed=1
  for pid in "$@"; do keep[$pid]=1; done
  while ((changed)); do
    changed=0
    for f in /proc/[0-9]*/stat; do
      read -r pid _ _ ppid _ 2>/dev/null <"$f" || continue
      if [ -n "${keep[$ppid]:-}" ] && [ -z "${keep[$pid]:-}" ]; then keep[$pid]=1 changed=1; fi
    done
  done
  printf '%s\n' "${!keep[@]}"
}

# Succeeds when none of the pids is a live process (a zombie is not: it only waits for its parent).
all_gone() {
  local state
  for pid in "$@"; do
    state=$(ps -o stat= -p "$pid" 2>/dev/null) || continue
    [[ $state == Z* ]] || return 1
  done
}

stop_processes() {
  local -a pids
  mapfile -t pids < <(cluster_pids | sort -u | grep -v "^$$\$" || true)
  ((${#pids[@]})) || return 0
  mapfile -t pids < <(with_descendants "${pids[@]}")
  kill -TERM "${pids[@]}" 2>/dev/null || true
  wait_until 10 all_gone "${pids[@]}" && return 0
  kill -KILL "${pids[@]}" 2>/dev/null || true
  wait_until 10 all_gone "${pids[@]}" || true
}

# The cluster's loop devices: the pool's own (its image is in $STATE) and every device whose backing
# file lives on the pool's filesystem. The second kind is found by device number, not by path: a
# device attached inside a container that is gone shows its file relative to a mount that no
# longer exists ("/images/vol-....img").
cluster_loops() {
  losetup -l -n -O NAME,MAJ:MIN,BACK-MAJ:MIN,BACK-FILE 2>/dev/null | awk -v s="$STATE/" '
    { name[NR] = $1; back[NR] = $3; file[NR] = $4 }
    index($4, s) == 1 { pool[$2] = 1 }
    END { for (i = 1; i <= NR; i++) if (index(file[i], s) == 1 || back[i] in pool) print name[i] }'
}

release_namespaces() {
  local dev dir
  release_second_node_ns
  if [ -e "$MNT_NS" ]; then
    umount "$MNT_NS" 2>/dev/null || umount -l "$MNT_NS" 2>/dev/null || true
  fi
  mountpoint -q "$MNT_DIR" && umount -l "$MNT_DIR"
  rm -rf "$MNT_DIR"
  # The volumes' loop devices first: they hold files on the pool's filesystem, whose own loop
  # device goes once nothing holds it.
  for _ in 1 2 3; do
    while read -r dev; do [ -n "$dev" ] && losetup -d "$dev" 2>/dev/null; done < <(cluster_loops)
    [ -z "$(cluster_loops)" ] && break
    sleep 1
  done
  for dir in /sys/fs/cgroup/*/kubepods; do
    [ -d "$dir" ] && find "$dir" -depth -type d -exec rmdir {} + 2>/dev/null
  done
  ip netns del "$NETNS" 2>/dev/null || true
  ip netns del "$SINK" 2>/dev/null || true
  if [ -f "$STATE/created-dirs" ]; then
    tac "$STATE/created-dirs" | while read -r dir; do rmdir "$dir" 2>/dev/null || true; done
    rm -f "$STATE/created-dirs"
  fi
}

restore_sysctls() {
  [ -f "$STATE/sysctls.saved" ] || return 0
  local line
  while read -r line; do sysctl -q -w "$line" >/dev/null; done <"$STATE/sysctls.saved"
  rm -f "$STATE/sysctls.saved"
}

# The host's interfaces and routes, which the cluster must leave as they were (the E2E tier reads
# the same three listings).
host_network() { ip -br link && ip route && ip -6 route; }

# What a run may not leave behind; prints each problem and fails when there is one.
leftovers() {
  local problems=0 dir pids
  pids=$(cluster_pids | sort -u | xargs)
  [ -z "$pids" ] || { echo "processes left: $pids"; problems=1; }
  [ -z "$(cluster_loops)" ] || { echo "loop devices left: $(cluster_loops | xargs)"; problems=1; }
  ip netns list | grep -qE "^($NETNS|$SINK)( |$)" && { echo "network namespaces left"; problems=1; }
  grep -qE " ($MNT_DIR|/var/lib/soko|/var/lib/kubelet)" /proc/self/mounts && { echo "mounts left"; problems=1; }
  for dir in /sys/fs/cgroup/*/kubepods; do [ -d "$dir" ] && { echo "cgroup left: $dir"; problems=1; }; done
  if [ -f "$STATE/host-network.before" ] &&
    ! diff -q "$STATE/host-network.before" <(host_network) >/dev/null; then
    echo "the host's interfaces or routes changed:"
    diff "$STATE/host-network.before" <(host_network)
    problems=1
  fi
  return $problems
}

down() {
  require_root "the local cluster"
  stop_processes
  release_namespaces
  restore_sysctls
  rm -rf "$STATE/pids" "$STATE/root" "$STATE/etcd" "$STATE/cni" "$STATE/pool.img" "$STATE/api.sock" \
    "${STATE:?}/$SECOND_NODE" "$STATE/disks"
  if [ "${1:-}" = quiet ]; then
    leftovers >/dev/null || die "a previous cluster could not be removed: run 'hack/local-cluster.sh down'"
  else
    leftovers || die "the cluster left something behind (above)"
    log "down: no process, mount, loop device, namespace, cgroup or sysctl change left"
  fi
}

case ${1:-} in
up) up ;;
down) down ;;
images) build_node_images ;;
env) cat "$STATE/env" ;;
restart) restart "${2:?restart what? containerd or kubelet}" ;;
ctr) shift && ctr "$@" ;;
second-node) second_node_up "${2:?namespace of the node plugin}" "${3:?its DaemonSet}" ;;
second-node-down) second_node_down ;;
statfs) statfs "${2:?which node}" "${3:?which path}" ;;
mount-disk) mount_disk "${2:?which node}" "${3:?where}" "${4:?its size}" "${5:-xfs}" ;;
umount-disk) umount_disk "${2:?which node}" "${3:?where}" ;;
*) die "usage: hack/local-cluster.sh up|down|images|env|restart NAME|ctr ARGS...|second-node NS DAEMONSET|second-node-down|statfs NODE PATH|mount-disk NODE PATH SIZE [xfs|btrfs]|umount-disk NODE PATH" ;;
esac
