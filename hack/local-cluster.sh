#!/usr/bin/env bash
# A real Kubernetes cluster of one or more nodes on this machine: etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler and snapshot-controller on the first node, and on every
# node containerd 2.x with Debian's runc and CNI plugins, a kubelet and kube-proxy, all built from
# the pinned sources (hack/versions.env, hack/tools.sh). Needs root.
#
#   hack/local-cluster.sh up        start it (after removing whatever a killed run left); prints KUBECONFIG
#   hack/local-cluster.sh down      stop it and remove everything it made; checks that nothing is left
#   hack/local-cluster.sh images    (re)build the node's images: pause, CSI sidecars, busybox, fio, OLM
#   hack/local-cluster.sh env       print the variables a client needs (KUBECONFIG, ...)
#   hack/local-cluster.sh nodes     print the nodes' names, one per line, the first node first
#   hack/local-cluster.sh usage     print each node's resident memory, by program
#   hack/local-cluster.sh restart containerd|kubelet [NODE]   restart one of a node's services
#   hack/local-cluster.sh ctr [--node NODE] ARGS...           containerd's ctr on a node (k8s.io namespace)
#   hack/local-cluster.sh statfs NODE PATH               statfs(2) of PATH as NODE sees it
#   hack/local-cluster.sh mount-disk NODE PATH SIZE [FS] mount a fresh disk at PATH on NODE: FS xfs
#                                                        (default) or btrfs (with quotas enabled)
#   hack/local-cluster.sh umount-disk NODE PATH          and unmount it again
#   hack/local-cluster.sh mounts NODE                    NODE's mount table, as NODE sees it
#   hack/local-cluster.sh ls NODE DIR                    the names in DIR, as NODE sees it
#   hack/local-cluster.sh occurrences NODE FILE TEXT     how often TEXT's bytes are in FILE on NODE
#   hack/local-cluster.sh stop-node NODE                 NODE's machine dies (not the first node):
#                                                        processes, mounts and volume loop devices
#                                                        go; its disks stay
#   hack/local-cluster.sh start-node NODE                and boots again with them
#   hack/local-cluster.sh ssh NODE COMMAND               COMMAND on NODE through its SSH server, as
#                                                        Kubernetes' e2e suite runs commands there
#   hack/local-cluster.sh client COMMAND                 COMMAND on the host in the cluster's network,
#                                                        which reaches the nodes' addresses (their SSH
#                                                        servers), with KUBECONFIG and KUBE_SSH_* set
#
# Each node is what a node of a kind cluster is, without a container engine:
# - its own network namespace (the first node's is $NETNS; the control plane lives there too) with
#   loopback, the pods' bridge and one veth to the cluster's switch, a bridge in the namespace
#   $SINK that has no address and no route. Node addresses are 10.250.0.N, pod subnets
#   10.244.(N-1).0/24, routed node to node. No namespace has a default route: nothing the cluster
#   sends can leave the machine. The host reaches the API server only through a Unix socket
#   relayed to 127.0.0.1:$API_HOST_PORT.
# - its own mount namespace (a slave of the host's), so no volume, loop filesystem or pod netns
#   file shows up in the host's mount table or on another node. /var/lib/kubelet and the runtime's
#   folders are bind mounts from the node's folder in $STATE there, and the node's pool filesystem
#   (XFS with reflink, on a loop device) is mounted at /var/lib/soko.
# - its own PID namespace, whose PID 1 (the pause program as init) lives in the node's mount
#   namespace, so that a hostPID pod's `nsenter --mount=/proc/1/ns/mnt` lands on the node, as the
#   ecosystem's tools expect.
# - its own cgroup sub-tree (the kubelet's cgroupRoot /NODE), so pods of two nodes never share
#   a cgroup, and its own certificates (system:node:NODE; NodeRestriction is on).
# - an SSH server on its address (port 22, Debian's sshd, the cluster's own key in
#   $STATE/ssh/id_ed25519, root only) whose sessions run on the node, with a `systemctl` that stops,
#   starts and restarts the node's kubelet for real (hack/node-systemctl.sh): what the e2e suite's
#   [Disruptive] specs send to a node. Only the cluster's namespaces reach that address.
#
# Environment: SOKO_CLUSTER_DIR (state, default /var/tmp/soko-cluster), SOKO_CLUSTER_API_PORT (the
# host's loopback port of the API server, default 16443), SOKO_CLUSTER_NODES (how many nodes, 1 to
# 4, default 1), SOKO_CLUSTER_POOL_SIZE (the first node's pool filesystem, default 8G),
# SOKO_CLUSTER_OTHER_POOL_SIZE (every other node's, default 16G: pools of different sizes, for
# placement by capacity), SOKO_CLUSTER_EXTRA_IMAGES (a folder of soko-<name>-<version>.oci.tar
# archives imported beside the working tree's, e.g. a previous release for the upgrade tier),
# SOKO_CLUSTER_CONTROLLER_QPS (kube-controller-manager's --kube-api-qps, its burst twice that;
# default: Kubernetes' own, 20 and 30, for the provisioning benchmark's comparison).
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
NODE_COUNT=${SOKO_CLUSTER_NODES:-1}
POOL_SIZE=${SOKO_CLUSTER_POOL_SIZE:-8G}
OTHER_POOL_SIZE=${SOKO_CLUSTER_OTHER_POOL_SIZE:-16G}
CONTROLLER_QPS=${SOKO_CLUSTER_CONTROLLER_QPS:-}
# Down removes whatever any of these left, whatever SOKO_CLUSTER_NODES says now.
MAX_NODES=4
NETNS=soko-cluster
SINK=soko-cluster-sink
SWITCH=sokosw0
MNT_DIR=/run/soko-cluster
API_IP=10.250.0.1
SERVICE_CIDR=10.0.0.0/24
CLUSTER_CIDR=10.244.0.0/16
BRIDGE=sokocni0
IMAGE_REGISTRY=$(cluster_registry)
# Folders the node's processes expect at their usual places, each a bind mount from the node's
# folder in $STATE.
NODE_DIRS=(/var/lib/kubelet /var/lib/containerd /var/log/pods /var/log/containers /var/lib/cni)
# The kubelet sets these host-wide (they are not per network namespace); down puts them back.
KUBELET_SYSCTLS=(kernel.panic kernel.panic_on_oops vm.overcommit_memory)
NODE_TOOLS=(etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl
  containerd containerd-shim-runc-v2 ctr csi-provisioner csi-resizer csi-snapshotter csi-snapshot-metadata
  snapshot-controller)

# --- nodes ----------------------------------------------------------------------------------------

# node_name N: soko-node, soko-node-b, soko-node-c, ...
node_name() {
  if (($1 == 1)); then echo soko-node; else printf 'soko-node-%b\n' "\\x$(printf %x $((96 + $1)))"; fi
}

# node_index NAME: the N of node_name, or a fatal error for a name that is no node's.
node_index() {
  local i
  for ((i = 1; i <= MAX_NODES; i++)); do [ "$(node_name "$i")" = "$1" ] && echo "$i" && return; done
  die "no node '$1' here (hack/local-cluster.sh nodes lists them)"
}

node_netns() { if (($1 == 1)); then echo "$NETNS"; else echo "$NETNS-${2:-$(node_name "$1")}"; fi; }
node_dir() { echo "$STATE/nodes/$(node_name "$1")"; }
node_mnt() { echo "$MNT_DIR/$(node_name "$1").mnt"; }
node_ip() { echo "10.250.0.$1"; }
node_pod_cidr() { echo "10.244.$(($1 - 1)).0/24"; }
node_pod_gateway() { echo "10.244.$(($1 - 1)).1"; }
node_init_pid() { cat "$STATE/pids/$(node_name "$1")-init.pid"; }

# on_node N CMD...: CMD in node N's mount, network and PID namespaces, as a process of that node.
on_node() {
  local n=$1
  shift
  nsenter --target "$(node_init_pid "$n")" --mount --net --pid -- "$@"
}
in_ns() { on_node 1 "$@"; }
kc() { in_ns "$BIN/kubectl" --kubeconfig "$STATE/pki/admin.kubeconfig" "$@"; }

# start [--node N] NAME CMD...: CMD as a process of node N (default the first), detached, logging
# to $STATE/logs/NAME.log; the pid file holds the process's own pid (on the host), not nsenter's,
# which forks to enter the PID namespace and only waits for it.
start() {
  local n=1 name init launcher
  if [ "$1" = --node ]; then n=$2 && shift 2; fi
  name=$1
  shift
  init=$(node_init_pid "$n")
  # The cluster's own kubeconfigs only: a client's KUBECONFIG (the host's view) must not leak in.
  env -u KUBECONFIG setsid nsenter --target "$init" --mount --net --pid -- "$@" \
    >"$STATE/logs/$name.log" 2>&1 </dev/null &
  launcher=$!
  wait_until 10 child_in_pidns "$launcher" "$init" || die "$name did not start (see $STATE/logs/$name.log)"
  child_in_pidns "$launcher" "$init" >"$STATE/pids/$name.pid"
}

# child_in_pidns PARENT INIT: the child of PARENT that lives in INIT's PID namespace (nsenter's
# fork), not a short-lived helper of the shell that started it; fails while there is none.
child_in_pidns() {
  local pid ns
  ns=$(readlink "/proc/$2/ns/pid") || return 1
  for pid in $(pgrep -P "$1"); do
    [ "$(readlink "/proc/$pid/ns/pid" 2>/dev/null)" = "$ns" ] && echo "$pid" && return 0
  done
  return 1
}

check_tools() {
  local tool missing=()
  for tool in "${NODE_TOOLS[@]}"; do [ -x "$BIN/$tool" ] || missing+=("$tool"); done
  ((${#missing[@]} == 0)) || die "missing tools in $BIN: ${missing[*]} (run: hack/tools.sh ${missing[*]})"
  [ -d "$BIN/../crds/snapshot" ] || die "VolumeSnapshot CRDs missing (run: hack/tools.sh snapshot-crds)"
  [ -f "$BIN/../crds/snapshot/cbt.storage.k8s.io_snapshotmetadataservices.yaml" ] ||
    die "SnapshotMetadataService CRD missing (run: hack/tools.sh snapshot-crds)"
  for tool in runc nsenter unshare socat iptables mkfs.xfs sshd ssh ssh-keygen; do
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
  for name in csi-provisioner csi-resizer csi-snapshotter csi-snapshot-metadata; do
    case $name in
    csi-provisioner) version=$CSI_PROVISIONER_VERSION ;;
    csi-resizer) version=$CSI_RESIZER_VERSION ;;
    csi-snapshotter) version=$CSI_SNAPSHOTTER_VERSION ;;
    csi-snapshot-metadata) version=$SNAPSHOT_METADATA_VERSION ;;
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

# fio (Debian's, with the libraries it links) and busybox, for the workloads that measure a volume's
# IO limits from inside their pod.
build_fio_image() {
  local name
  local -a links=() libraries=()
  command -v fio >/dev/null || die "fio is missing: run hack/deps.sh"
  while read -r name; do
    [ "$name" = busybox ] || links+=(--symlink "/bin/$name:busybox")
  done < <(/bin/busybox --list)
  mapfile -t libraries < <(oci_image_libraries "$(command -v fio)")
  mkdir -p "$IMAGES_DIR"
  python3 "$ROOT/hack/oci-image.py" --name "$IMAGE_REGISTRY/fio:1" --out "$IMAGES_DIR/fio.oci.tar.partial" \
    --file "$(readlink -f "$(command -v fio)"):/usr/bin/fio" "${libraries[@]}" \
    --file /bin/busybox:/bin/busybox "${links[@]}" --dir /tmp:1777 \
    --env PATH=/usr/bin:/bin --entrypoint /bin/sh
  mv "$IMAGES_DIR/fio.oci.tar.partial" "$IMAGES_DIR/fio.oci.tar"
}

olm_image() { printf '%s/olm:%s\n' "$IMAGE_REGISTRY" "$OLM_VERSION"; }

# OLM's install manifests in $IMAGES_DIR/olm: crds.yaml, and olm.yaml rendered from OLM's chart
# with the values upstream releases it with, but every container on that image and never pulling,
# one package server replica (2 cores), and without upstream's default catalog (a remote one).
write_olm_manifests() {
  local chart=$BIN/../olm/manifests image
  [ -f "$chart/values.yaml" ] || die "OLM's chart is missing (run: make tools-node)"
  image=$(olm_image)
  mkdir -p "$IMAGES_DIR/olm"
  local crd
  for crd in "$chart"/chart/crds/*.yaml; do
    printf -- '---\n'
    cat "$crd"
  done >"$IMAGES_DIR/olm/crds.yaml"
  "$BIN/helm" template olm "$chart/chart" --values "$chart/values.yaml" \
    --set "olm.image.ref=$image,catalog.image.ref=$image,package.image.ref=$image" \
    --set "olm.image.pullPolicy=IfNotPresent,catalog.image.pullPolicy=IfNotPresent" \
    --set "package.image.pullPolicy=IfNotPresent,package.replicaCount=1,installType=" \
    --set "catalog.commandArgs=--configmapServerImage=$image,catalog.opmImageArgs=--opmImage=$image" \
    >"$IMAGES_DIR/olm/olm.yaml" || die "cannot render OLM's chart"
}

# OLM's image, as upstream's holds it: its operators and package server, the bundle copier (cpb,
# which unpack jobs run inside each bundle image, copied there with cp), opm (which extracts the
# bundles) and grpc_health_probe; all static Go programs, with busybox for cp.
build_olm_image() {
  local name files=()
  for name in olm catalog package-server copy-content cpb opm grpc_health_probe; do
    [ -x "$BIN/$name" ] || die "$name is missing in $BIN (run: make tools-node)"
    files+=(--file "$(readlink -f "$BIN/$name"):/bin/$name")
  done
  python3 "$ROOT/hack/oci-image.py" --name "$(olm_image)" --out "$IMAGES_DIR/olm.oci.tar.partial" \
    "${files[@]}" --file /bin/busybox:/bin/busybox --symlink /bin/cp:busybox --dir /tmp:1777 \
    --env PATH=/bin --user 1001 --entrypoint /bin/olm
  mkdir -p "$IMAGES_DIR/olm"
  echo "$OLM_VERSION" >"$IMAGES_DIR/olm/version"
  mv "$IMAGES_DIR/olm.oci.tar.partial" "$IMAGES_DIR/olm.oci.tar"
}

# import_images N: the archives imported into node N's runtime: the node images and Soko's own
# (hack/images.sh), renamed into $IMAGE_REGISTRY.
import_images() {
  local n=$1 archive version name
  for archive in "$IMAGES_DIR"/*.oci.tar; do
    ctr --node "$n" images import --platform linux/amd64 "$archive" >/dev/null 2>>"$STATE/logs/ctr.log" ||
      die "cannot import $archive"
  done
  version=$(grep -m1 -oP '(?<=<version>)[^<]+' "$ROOT/pom.xml")
  for name in driver operator; do
    archive=$ROOT/target/images/soko-$name-$version.oci.tar
    [ -f "$archive" ] || die "$archive is missing (run: make images)"
  done
  # The driver and operator, and the OLM bundle and catalog when they were built.
  for archive in "$ROOT"/target/images/soko-*-"$version".oci.tar; do
    import_soko_image "$n" "$archive"
  done
  if [ -n "${SOKO_CLUSTER_EXTRA_IMAGES:-}" ]; then
    for archive in "$SOKO_CLUSTER_EXTRA_IMAGES"/soko-*-*.oci.tar; do
      [ -f "$archive" ] || die "no soko-<name>-<version>.oci.tar in $SOKO_CLUSTER_EXTRA_IMAGES"
      import_soko_image "$n" "$archive"
    done
  fi
}

# import_soko_image N ARCHIVE: one of Soko's images, soko-NAME-VERSION.oci.tar (NAME without digits,
# e.g. operator-bundle; VERSION from its first digit on), into node N as
# $IMAGE_REGISTRY/soko-NAME:VERSION.
import_soko_image() {
  local n=$1 archive=$2 name version ref digest target
  [[ ${archive##*/} =~ ^soko-([a-z-]+)-([0-9][^/]*)\.oci\.tar$ ]] ||
    die "$archive is not named soko-<name>-<version>.oci.tar"
  name=${BASH_REMATCH[1]} version=${BASH_REMATCH[2]}
  ctr --node "$n" images import --platform linux/amd64 "$archive" >/dev/null 2>>"$STATE/logs/ctr.log" ||
    die "cannot import $archive"
  # podman names the image in the archive after its build (localhost/..., or IMAGE_REGISTRY);
  # hack/oci-image.py names it as containerd does.
  read -r ref digest < <(tar -xOf "$archive" index.json | python3 -c 'import json, sys
image = json.load(sys.stdin)["manifests"][0]
notes = image["annotations"]
print(notes.get("io.containerd.image.name") or notes["org.opencontainers.image.ref.name"], image["digest"])')
  target=$IMAGE_REGISTRY/soko-$name
  if [ "$ref" != "$target:$version" ]; then
    { ctr --node "$n" images tag --force "$ref" "$target:$version" &&
      ctr --node "$n" images rm "$ref"; } >/dev/null 2>>"$STATE/logs/ctr.log" ||
      die "cannot name $ref $target:$version"
  fi
  # Also by digest, as a pull by digest names it: OLM runs catalog and bundle images by digest.
  ctr --node "$n" images tag --force "$target:$version" "$target@$digest" >/dev/null 2>>"$STATE/logs/ctr.log" ||
    die "cannot name $target:$version $target@$digest"
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
  local i name
  mkdir -p "$STATE/pki"
  (
    cd "$STATE/pki"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 7 \
      -subj /CN=soko-local-ca -addext basicConstraints=critical,CA:TRUE \
      -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
    cert apiserver /CN=kube-apiserver serverAuth \
      "DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost,IP:127.0.0.1,IP:10.0.0.1,IP:$API_IP"
    cert admin "/O=system:masters/CN=soko-local-admin" clientAuth
    cert controller-manager /CN=system:kube-controller-manager clientAuth
    cert scheduler /CN=system:kube-scheduler clientAuth
    cert kube-proxy /CN=system:kube-proxy clientAuth
    cert apiserver-kubelet-client /CN=kube-apiserver-kubelet-client clientAuth
    # Each node is itself to the API server (NodeRestriction) and serves its own certificate.
    for ((i = 1; i <= NODE_COUNT; i++)); do
      name=$(node_name "$i")
      cert "kubelet-$name" "/O=system:nodes/CN=system:node:$name" clientAuth
      cert "kubelet-serving-$name" "/CN=$name" serverAuth "DNS:$name,DNS:localhost,IP:127.0.0.1,IP:$(node_ip "$i")"
    done
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    # The aggregation layer, as kubeadm sets it up: the API server proxies to aggregated API servers
    # (OLM's package server) with a client certificate of a CA of its own, which those servers
    # trust for the user and groups it passes on in request headers.
    openssl req -x509 -newkey rsa:2048 -nodes -keyout front-proxy-ca.key -out front-proxy-ca.crt \
      -days 7 -subj /CN=soko-local-front-proxy-ca -addext basicConstraints=critical,CA:TRUE \
      -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -keyout front-proxy-client.key -out front-proxy-client.csr \
      -subj /CN=front-proxy-client 2>/dev/null
    printf 'extendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n' >front-proxy-client.ext
    openssl x509 -req -in front-proxy-client.csr -CA front-proxy-ca.crt -CAkey front-proxy-ca.key \
      -CAcreateserial -days 7 -extfile front-proxy-client.ext -out front-proxy-client.crt 2>/dev/null
    rm -f front-proxy-client.csr front-proxy-client.ext
  ) || die "openssl failed to make the certificates"
  for name in admin controller-manager scheduler; do
    kubeconfig "$STATE/pki/$name.kubeconfig" "$name" https://127.0.0.1:6443
  done
  # Node processes reach the API server across the switch; the first node's through its loopback.
  kubeconfig "$STATE/pki/kube-proxy.kubeconfig" kube-proxy "https://$API_IP:6443"
  for ((i = 1; i <= NODE_COUNT; i++)); do
    name=$(node_name "$i")
    kubeconfig "$STATE/pki/kubelet-$name.kubeconfig" "kubelet-$name" "https://$API_IP:6443"
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

# The switch: a bridge in $SINK with no address and no route, one port per node.
make_switch() {
  ip netns add "$SINK"
  ip -n "$SINK" link add "$SWITCH" type bridge
  ip -n "$SINK" link set "$SWITCH" up
}

# make_netns N: node N's network namespace, its veth to the switch and the routes to the other
# nodes' pod subnets.
make_netns() {
  local n=$1 netns j
  netns=$(node_netns "$n")
  ip netns add "$netns"
  ip -n "$netns" link set lo up
  ip -n "$netns" link add soko0 type veth peer name "port$n" netns "$SINK"
  ip -n "$netns" addr add "$(node_ip "$n")/24" dev soko0
  ip -n "$netns" link set soko0 up
  ip -n "$SINK" link set "port$n" master "$SWITCH" up
  ip netns exec "$netns" sysctl -q -w net.ipv4.ip_forward=1
  # Host-network clients (the kubelet, a hostNetwork pod) reach ClusterIPs only with a route
  # to them; kube-proxy then rewrites the destination. Not a default route.
  ip -n "$netns" route add "$SERVICE_CIDR" dev soko0
  for ((j = 1; j <= NODE_COUNT; j++)); do
    ((j == n)) || ip -n "$netns" route add "$(node_pod_cidr "$j")" via "$(node_ip "$j")" dev soko0
  done
}

# make_mountns N: node N's mount namespace, its folders and its pool filesystem.
make_mountns() {
  local n=$1 dir mnt node_dir size=$OTHER_POOL_SIZE
  ((n > 1)) || size=$POOL_SIZE
  mnt=$(node_mnt "$n")
  node_dir=$(node_dir "$n")
  mkdir -p "$node_dir"
  touch "$mnt"
  unshare --mount="$mnt" --propagation slave true
  # A node started again (start-node) keeps its disk, as a machine that reboots does.
  if [ ! -f "$node_dir/pool.img" ]; then
    truncate -s "$size" "$node_dir/pool.img"
    mkfs.xfs -q -m reflink=1 "$node_dir/pool.img"
  fi
  # shellcheck disable=SC2016 # a script for the node's mount namespace, with its own arguments
  nsenter --mount="$mnt" -- bash -euc '
    node_dir=$1; shift
    # Shared inside, so that the node plugin'\''s Bidirectional mounts reach the kubelet and the pods.
    mount --make-rshared /
    for dir in "$@"; do mkdir -p "$node_dir/root$dir" && mount --bind "$node_dir/root$dir" "$dir"; done
    mount -t tmpfs -o mode=0711 tmpfs /run/containerd
    # Each node'\''s runtime re-creates its NRI socket at start: in a shared /run the last one
    # started would take every node'\''s socket.
    mount -t tmpfs -o mode=0700 tmpfs /run/nri
    mount -o loop "$node_dir/pool.img" /var/lib/soko
  ' _ "$node_dir" "${NODE_DIRS[@]}"
}

# The mount points every node binds its folders to, made on the host where missing (down removes
# what it made).
make_mount_points() {
  local dir
  mkdir -p "$MNT_DIR"
  mount --bind "$MNT_DIR" "$MNT_DIR"
  mount --make-private "$MNT_DIR"
  : >"$STATE/created-dirs"
  # /run/sshd: the nodes' SSH servers' privilege separation folder (empty, root's).
  for dir in "${NODE_DIRS[@]}" /run/containerd /run/nri /var/lib/soko /run/sshd; do
    [ -d "$dir" ] || { mkdir -p "$dir" && echo "$dir" >>"$STATE/created-dirs"; }
  done
}

# make_init N: node N's PID 1, the pause program (it reaps orphans and exits at SIGTERM; the
# kernel then kills every process of the node), in the node's mount and network namespaces with a
# /proc of its own PID namespace.
make_init() {
  local n=$1 name launcher pid
  name=$(node_name "$n")
  # shellcheck disable=SC2016 # the inner script's own argument
  setsid nsenter --mount="$(node_mnt "$n")" --net="/run/netns/$(node_netns "$n")" -- \
    unshare --pid --fork -- /bin/sh -c 'mount -t proc proc /proc && exec "$0"' "$STATE/node-init" \
    >"$STATE/logs/$name-init.log" 2>&1 </dev/null &
  launcher=$!
  wait_until 10 pgrep -P "$launcher" -x node-init || die "node $name: no init (see $STATE/logs/$name-init.log)"
  pid=$(pgrep -P "$launcher" -x node-init)
  echo "$pid" >"$STATE/pids/$name-init.pid"
}

# make_cgroup_root N: the cgroup the kubelet of node N puts its pods under, in every hierarchy (the
# kubelet refuses a cgroupRoot that does not exist). cpuset's own settings start empty in a new v1
# cgroup: the root's are copied, or no child could take a task.
make_cgroup_root() {
  local dir
  for dir in /sys/fs/cgroup/*/; do
    mountpoint -q "$dir" || continue
    mkdir -p "$dir/$(node_name "$1")"
  done
  if [ -f /sys/fs/cgroup/cpuset/cpuset.cpus ]; then
    dir=/sys/fs/cgroup/cpuset/$(node_name "$1")
    cat /sys/fs/cgroup/cpuset/cpuset.cpus >"$dir/cpuset.cpus"
    cat /sys/fs/cgroup/cpuset/cpuset.mems >"$dir/cpuset.mems"
  fi
}

write_cluster_configs() {
  mkdir -p "$STATE/etc"
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
}

# write_node_configs N: the runtime's, CNI's, kubelet's and kube-proxy's configuration of node N.
write_node_configs() {
  local n=$1 name ip pod_cidr pod_gateway etc cni
  name=$(node_name "$n")
  ip=$(node_ip "$n")
  pod_cidr=$(node_pod_cidr "$n")
  pod_gateway=$(node_pod_gateway "$n")
  etc=$(node_dir "$n")/etc
  cni=$(node_dir "$n")/cni
  mkdir -p "$etc" "$cni/net.d"
  cat >"$etc/containerd.toml" <<EOF
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
  # NRI (containerd's default state, said here): the node plugin connects at the default socket,
  # in this node's own /run/nri (make_mountns), and writes a volume's IO limits into a container's
  # cgroup before the container runs. A plugin that does not answer in time is dropped and the
  # container starts without it.
  [plugins.'io.containerd.nri.v1.nri']
    disable = false
    socket_path = '/var/run/nri/nri.sock'
    plugin_request_timeout = '2s'
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
      conf_dir = '$cni/net.d'
      max_conf_num = 1
  [plugins.'io.containerd.grpc.v1.cri']
    # kubectl exec/logs/port-forward stream through the node's loopback.
    stream_server_address = '127.0.0.1'
    stream_server_port = '0'
EOF
  cat >"$cni/net.d/10-soko.conflist" <<EOF
{"cniVersion": "1.0.0", "name": "soko-local", "plugins": [
  {"type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "dataDir": "$cni/ipam",
            "ranges": [[{"subnet": "$pod_cidr", "gateway": "$pod_gateway"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "portmap", "capabilities": {"portMappings": true}}]}
EOF
  cat >"$etc/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# This machine's cgroups are v1 (hybrid layout); without this the kubelet refuses to start.
failCgroupV1: false
cgroupDriver: cgroupfs
# Each node's pods in a cgroup sub-tree of their own (make_cgroup_root).
cgroupRoot: /$name
failSwapOn: false
# Root lacks CAP_SYS_RESOURCE: the default -999 cannot be written, and the nofile hard limit is 20000.
oomScoreAdj: 0
maxOpenFiles: 20000
containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
address: $ip
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
tlsCertFile: $STATE/pki/kubelet-serving-$name.crt
tlsPrivateKeyFile: $STATE/pki/kubelet-serving-$name.key
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
  cat >"$etc/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $STATE/pki/kube-proxy.kubeconfig}
mode: iptables
hostnameOverride: $name
clusterCIDR: $CLUSTER_CIDR
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
    --bind-address 0.0.0.0 --secure-port 6443 --advertise-address "$API_IP" \
    --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
    --client-ca-file "$pki/ca.crt" \
    --requestheader-client-ca-file "$pki/front-proxy-ca.crt" --requestheader-allowed-names front-proxy-client \
    --requestheader-username-headers X-Remote-User --requestheader-group-headers X-Remote-Group \
    --requestheader-extra-headers-prefix X-Remote-Extra- \
    --proxy-client-cert-file "$pki/front-proxy-client.crt" --proxy-client-key-file "$pki/front-proxy-client.key" \
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
    --service-cluster-ip-range "$SERVICE_CIDR" --profiling=false --v 1 \
    ${CONTROLLER_QPS:+--kube-api-qps "$CONTROLLER_QPS" --kube-api-burst "$((CONTROLLER_QPS * 2))"}
  start kube-scheduler "$BIN/kube-scheduler" --config "$STATE/etc/scheduler.yaml" \
    --authentication-kubeconfig "$pki/scheduler.kubeconfig" \
    --authorization-kubeconfig "$pki/scheduler.kubeconfig" --bind-address 127.0.0.1 --profiling=false
  kc apply -f "$BIN/../crds/snapshot/" >/dev/null
  # With them the SnapshotMetadataService CRD (changed block tracking), which hack/tools.sh puts there.
  kc wait --for condition=Established --timeout 60s crd --all >/dev/null || die "snapshot CRDs not established"
  # A cluster add-on, as on any cluster with snapshots. Distributed snapshotting: each
  # VolumeSnapshotContent is labelled with its volume's node for the node-local csi-snapshotter.
  start snapshot-controller "$BIN/snapshot-controller" --kubeconfig "$pki/admin.kubeconfig" \
    --leader-election=false --enable-distributed-snapshotting --v 2
}


# run_containerd N
run_containerd() {
  local n=$1 name
  name=$(node_name "$n")
  # containerd 2.x finds its shim on PATH: the pinned one, before anything Debian installed.
  start --node "$n" "$name-containerd" \
    env PATH="$(dirname "$(readlink -f "$BIN/containerd-shim-runc-v2")"):/usr/sbin:/usr/bin:/sbin:/bin" \
    "$BIN/containerd" --config "$(node_dir "$n")/etc/containerd.toml"
  wait_until 60 ctr --node "$n" version || die "containerd did not start on $name (see $STATE/logs/$name-containerd.log)"
}

# run_kubelet N
run_kubelet() {
  local n=$1 name
  name=$(node_name "$n")
  save_sysctls
  start --node "$n" "$name-kubelet" "$BIN/kubelet" --config "$(node_dir "$n")/etc/kubelet.yaml" \
    --kubeconfig "$STATE/pki/kubelet-$name.kubeconfig" --hostname-override "$name" \
    --node-ip "$(node_ip "$n")" --v 2
}

# ctr [--node N|NAME] ARGS...: containerd's ctr on a node (the first by default).
ctr() {
  local n=1
  if [ "${1:-}" = --node ]; then
    n=$2
    [[ $n =~ ^[0-9]+$ ]] || n=$(node_index "$n")
    shift 2
  fi
  on_node "$n" "$BIN/ctr" --address /run/containerd/containerd.sock -n k8s.io "$@"
}

# Stops one of a node's services and starts it again, as an admin restarts a node's kubelet or
# runtime: the pods (their shims) go on running.
restart() {
  local service=$1 n name
  n=$(node_index "${2:-$(node_name 1)}")
  name=$(node_name "$n")
  case $service in containerd | kubelet) ;; *) die "restart: containerd or kubelet, not '$service'" ;; esac
  stop_service "$n" "$service"
  "run_$service" "$n"
  [ "$service" = kubelet ] || return 0
  wait_until 120 node_ready "$name" || die "node $name not Ready in 120 s after the kubelet restarted"
}

# stop_service N SERVICE: stops one of node N's services (TERM, KILL after 30 s); its log is kept
# aside, so that the next start writes a log of its own.
stop_service() {
  local n=$1 service=$2 name pid
  name=$(node_name "$n")
  pid=$(cat "$STATE/pids/$name-$service.pid")
  kill -TERM "$pid" 2>/dev/null || true
  wait_until 30 all_gone "$pid" || kill -KILL "$pid" 2>/dev/null || true
  wait_until 10 all_gone "$pid" || die "$name's $service (pid $pid) does not stop"
  if [ -f "$STATE/logs/$name-$service.log" ]; then
    mv "$STATE/logs/$name-$service.log" "$STATE/logs/$name-$service.$(date +%s%N).log"
  fi
}

service_running() {
  local pid
  pid=$(cat "$STATE/pids/$(node_name "$1")-$2.pid" 2>/dev/null) && ! all_gone "$pid"
}

# --- SSH to a node, and its kubelet's unit --------------------------------------------------------

# make_ssh_keys: the cluster's SSH key (the client's, which the e2e suite reads from
# KUBE_SSH_KEY_PATH), the nodes' host key, and the folder of the nodes' `systemctl`.
make_ssh_keys() {
  mkdir -p "$STATE/ssh" "$STATE/node-bin"
  chmod 700 "$STATE/ssh"
  ssh-keygen -q -t ed25519 -N '' -C soko-local-cluster -f "$STATE/ssh/id_ed25519"
  ssh-keygen -q -t ed25519 -N '' -C soko-local-node -f "$STATE/ssh/host_ed25519_key"
  cp "$STATE/ssh/id_ed25519.pub" "$STATE/ssh/authorized_keys"
  ln -sf "$ROOT/hack/node-systemctl.sh" "$STATE/node-bin/systemctl"
}

# write_sshd_config N: node N's SSH server: its address only, the cluster's key only, root only,
# no forwarding; sessions find the node's `systemctl` first, and the socket of its units.
# StrictModes is off: the key lives below $STATE, whose parent (/var/tmp) others may write to.
write_sshd_config() {
  local n=$1
  cat >"$(node_dir "$n")/etc/sshd_config" <<EOF
ListenAddress $(node_ip "$n"):22
HostKey $STATE/ssh/host_ed25519_key
AuthorizedKeysFile $STATE/ssh/authorized_keys
PidFile none
PermitRootLogin prohibit-password
AllowUsers root
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PrintMotd no
PrintLastLog no
X11Forwarding no
AllowTcpForwarding no
AllowStreamLocalForwarding no
AllowAgentForwarding no
PermitTunnel no
SetEnv PATH=$STATE/node-bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin SOKO_NODE_UNITS=$(node_dir "$n")/units.sock
EOF
}

# run_sshd N: node N's SSH server, a process of the node (its sessions see the node's mounts).
run_sshd() {
  local n=$1 name
  name=$(node_name "$n")
  start --node "$n" "$name-sshd" /usr/sbin/sshd -D -e -f "$(node_dir "$n")/etc/sshd_config"
  wait_until 10 on_node "$n" sh -c "ss -Hltn 'sport = :22' | grep -q ." ||
    die "sshd did not start on $name (see $STATE/logs/$name-sshd.log)"
}

# serve_units N: the host's end of node N's unit socket, where the node's `systemctl` sends its
# requests (the kubelet is started from the host, like every service of the node). It outlives a
# stopped node, as a machine's management controller does. -t: once the request is read (the
# client's end closed), socat waits for the answer up to that long, not its default half second.
serve_units() {
  local n=$1 name
  name=$(node_name "$n")
  setsid socat -t 120 "UNIX-LISTEN:$(node_dir "$n")/units.sock,fork,unlink-early,mode=600" \
    "EXEC:bash $ROOT/hack/local-cluster.sh unit $name" >"$STATE/logs/units-$name.log" 2>&1 </dev/null &
  echo $! >"$STATE/pids/units-$name.pid"
}

# unit NODE: one request of the node's `systemctl`, read from stdin (stop, start, restart or state
# of the kubelet); writes the answer, then `status=N`.
unit_request() {
  local n request status=0
  n=$(node_index "$1")
  exec 2>&1
  read -r request
  case $request in
  stop) stop_service "$n" kubelet ;;
  start) service_running "$n" kubelet || run_kubelet "$n" ;;
  restart) stop_service "$n" kubelet && run_kubelet "$n" ;;
  state) if service_running "$n" kubelet; then echo active; else echo inactive; fi ;;
  *) echo "no such request: '$request'" && status=2 ;;
  esac
  echo "status=$status"
}

# client COMMAND...: COMMAND as a process of the host (its files, its processes) in the first
# node's network namespace, from where every node's address is routed; KUBECONFIG names the API
# server by its address there, and the KUBE_SSH_* variables the e2e suite reads name the cluster's
# SSH key and user.
client() {
  exec nsenter --net="/run/netns/$(node_netns 1)" -- env KUBECONFIG="$STATE/pki/admin.kubeconfig" \
    KUBE_SSH_KEY_PATH="$STATE/ssh/id_ed25519" KUBE_SSH_USER=root "$@"
}

# ssh_node NODE COMMAND...: COMMAND on NODE through its SSH server, from the cluster's network.
ssh_node() {
  local n
  n=$(node_index "$1")
  shift
  nsenter --net="/run/netns/$(node_netns 1)" -- ssh -q -i "$STATE/ssh/id_ed25519" \
    -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes \
    "root@$(node_ip "$n")" "$@"
}

# start_node N: node N's runtime with the images, its kubelet and kube-proxy.
start_node() {
  local n=$1 name
  name=$(node_name "$n")
  run_containerd "$n"
  import_images "$n"
  run_kubelet "$n"
  start --node "$n" "$name-kube-proxy" "$BIN/kube-proxy" --config "$(node_dir "$n")/etc/kube-proxy.yaml"
  run_sshd "$n"
}

node_ready() {
  [ "$(kc get node "$1" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')" = True ]
}

# --- a node's filesystems, as an admin sees them on that node -------------------------------------

# statfs NODE PATH: statfs(2) of PATH on NODE: "fragment-size blocks free-blocks available-blocks".
statfs() {
  on_node "$(node_index "$1")" stat -f -c '%S %b %f %a' "$2"
}

# mount_disk NODE PATH SIZE [FS]: a fresh filesystem (a sparse image in $STATE/disks, on a loop
# device) mounted at PATH on NODE, as an admin mounts a new disk where a pool expects it. FS is xfs
# (with reflink; the default) or btrfs, prepared as a btrfs-subvolume pool needs it: quotas on.
mount_disk() {
  local n image fs=${4:-xfs}
  n=$(node_index "$1")
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
  on_node "$n" bash -euc 'mkdir -p "$2" && mount -o loop "$1" "$2"' _ "$image" "$2"
  if [ "$fs" = btrfs ]; then
    on_node "$n" btrfs quota enable "$2"
  fi
}

# mounts NODE: NODE's mount table as its processes see it, "TARGET SOURCE" a line.
mounts() {
  on_node "$(node_index "$1")" findmnt -rn -o TARGET,SOURCE
}

# list NODE DIR: the names in DIR as NODE sees it, one a line; nothing when DIR is missing.
list() {
  # shellcheck disable=SC2016 # the node's shell expands them
  on_node "$(node_index "$1")" sh -c '[ ! -d "$1" ] || ls -A "$1"' list "$2"
}

# occurrences NODE FILE TEXT: how many times TEXT's bytes occur in FILE as NODE sees it (0 for
# none), read as bytes: an admin's look at what a volume's image holds on the disk.
occurrences() {
  # shellcheck disable=SC2016 # the node's shell expands them
  on_node "$(node_index "$1")" sh -c '{ grep -a -o -F -e "$2" "$1" || true; } | wc -l' occurrences "$2" "$3"
}

# umount_disk NODE PATH: unmounts what mount_disk mounted; its loop device goes with it.
umount_disk() {
  on_node "$(node_index "$1")" umount "$2"
  rm -f "$STATE/disks/$1$(tr / _ <<<"$2").img"
}

# What each node costs: the resident memory of its processes and their pods' (the control plane's on
# the first node counted apart; the nsenter that waits for each process is the harness's, not the
# node's), by program of 10 MiB or more, and the node's total.
usage() {
  local i name
  while read -r name; do
    i=$(node_index "$name")
    # shellcheck disable=SC2046 # one pid an argument
    ps -o rss=,comm= -p $(with_descendants $(pids_in_mountns "$(node_mnt "$i")") | xargs | tr ' ' ,) | awk -v node="$name" '
      $2 ~ /^(etcd|kube-apiserver|kube-controller|kube-scheduler|snapshot-contro|socat)$/ { plane += $1; next }
      $2 == "nsenter" { next }
      { rss[$2] += $1; total += $1 }
      END {
        line = node ":"
        for (p in rss) if (rss[p] >= 10240) line = line sprintf(" %s %d MiB,", p, rss[p] / 1024)
        printf "%s node total %d MiB", line, total / 1024
        if (plane) printf "; control plane %d MiB", plane / 1024
        printf "\n"
      }'
  done <"$STATE/nodes.list"
}

# stop_node NODE: the node's machine dies: every process of the node is killed at once (its PID 1
# first: the kernel kills the rest of its PID namespace), and what a power cut takes goes with them:
# every mount of the node, its cgroups and the loop devices of its volumes. Its disks (the pool image, the
# kubelet's and the runtime's folders) and its network stay. The Node object is left as it is, as a
# dead kubelet leaves it.
stop_node() {
  local n mnt pool_dev dev name=$1
  n=$(node_index "$name")
  ((n > 1)) || die "stop-node: the first node runs the control plane; stop another one"
  mnt=$(node_mnt "$n")
  [ -e "$mnt" ] || die "stop-node: $name is not running"
  kill -KILL "$(node_init_pid "$n")" 2>/dev/null || true
  local -a pids
  # shellcheck disable=SC2046 # one pid an argument
  mapfile -t pids < <(with_descendants $(pids_in_mountns "$mnt"))
  ((${#pids[@]} == 0)) || kill -KILL "${pids[@]}" 2>/dev/null || true
  wait_until 20 all_gone "${pids[@]}" || die "stop-node: processes of $name do not die: ${pids[*]}"
  pool_dev=$(losetup -j "$(node_dir "$n")/pool.img" -n -O MAJ:MIN | xargs)
  umount "$mnt" 2>/dev/null || umount -l "$mnt"
  rm -f "$mnt" "$STATE/pids/$name"-*.pid
  # The volumes' loop devices hold files on the pool's filesystem; without them, the pool's own
  # loop device goes as its last mount did.
  if [ -n "$pool_dev" ]; then
    local -a volume_loops
    mapfile -t volume_loops < <(losetup -l -n -O NAME,BACK-MAJ:MIN | awk -v d="$pool_dev" '$2 == d {print $1}')
    # A pod's block volume holds one more loop device, the kubelet's, over the volume's device node
    # (a file of /dev, shown by inode): it keeps the volume's loop device busy until it goes.
    for dev in "${volume_loops[@]}"; do
      losetup -l -n -O NAME,BACK-MAJ:MIN,BACK-INO |
        awk -v d="$(mountpoint -d /dev)" -v i="$(stat -c %i "$dev")" '$2 == d && $3 == i {print $1}' |
        xargs -r -n1 losetup -d 2>/dev/null || true
    done
    for dev in "${volume_loops[@]}"; do losetup -d "$dev" 2>/dev/null || true; done
  fi
  wait_until 20 sh -c "! losetup -j '$(node_dir "$n")/pool.img' | grep -q ." ||
    die "stop-node: the pool disk of $name is still attached"
  # cgroups live in memory: a machine boots without its pods' (a kubelet that finds stale ones
  # spends seconds on each before it registers).
  find /sys/fs/cgroup/*/"$name" -depth -type d -exec rmdir {} + 2>/dev/null || true
  log "node $name stopped: its processes, mounts, cgroups and volume loop devices are gone; its disks stay"
}

# start_node_again NODE: boots a stopped node: its mount namespace with its disks, its PID 1, its
# runtime, kubelet and kube-proxy; the kubelet registers the Node again if it was deleted.
start_node_again() {
  local n name=$1
  n=$(node_index "$name")
  [ ! -e "$(node_mnt "$n")" ] || die "start-node: $name is running"
  make_mountns "$n"
  make_init "$n"
  make_cgroup_root "$n"
  start_node "$n"
  wait_until 120 node_ready "$name" || die "node $name not Ready in 120 s (see $STATE/logs/$name-kubelet.log)"
  log "node $name started again"
}

# The node's init program: the pause program, built for the host.
build_init() {
  gcc -static -Os -s -o "$STATE/node-init" "$ROOT/images/pause/pause.c" || die "cannot build the node's init"
}

up() {
  require_root "the local cluster"
  check_tools
  ((NODE_COUNT >= 1 && NODE_COUNT <= MAX_NODES)) || die "SOKO_CLUSTER_NODES: 1 to $MAX_NODES, not '$NODE_COUNT'"
  if [ ! -f "$IMAGES_DIR/pause.oci.tar" ] || [ ! -f "$IMAGES_DIR/csi-snapshot-metadata.oci.tar" ]; then
    build_node_images
  fi
  [ -f "$IMAGES_DIR/fio.oci.tar" ] || build_fio_image
  if [ ! -f "$IMAGES_DIR/olm.oci.tar" ] || [ "$(cat "$IMAGES_DIR/olm/version" 2>/dev/null)" != "$OLM_VERSION" ]; then
    build_olm_image
  fi
  write_olm_manifests
  down quiet
  local started=$SECONDS i
  mkdir -p "$STATE/logs" "$STATE/pids"
  rm -f "$STATE"/logs/*.log
  host_network >"$STATE/host-network.before"
  build_init
  make_switch
  make_mount_points
  for ((i = 1; i <= NODE_COUNT; i++)); do
    make_netns "$i"
    make_mountns "$i"
    make_init "$i"
    make_cgroup_root "$i"
    node_name "$i" >>"$STATE/nodes.list"
  done
  make_pki
  make_ssh_keys
  write_cluster_configs
  for ((i = 1; i <= NODE_COUNT; i++)); do
    write_node_configs "$i"
    write_sshd_config "$i"
  done
  start_control_plane
  for ((i = 1; i <= NODE_COUNT; i++)); do
    serve_units "$i"
    start_node "$i"
  done
  for ((i = 1; i <= NODE_COUNT; i++)); do
    wait_until 120 node_ready "$(node_name "$i")" ||
      die "node $(node_name "$i") not Ready in 120 s (see $STATE/logs/$(node_name "$i")-kubelet.log)"
  done
  wait_until 60 kc -n default get serviceaccount default || die "no default ServiceAccount"
  env_vars >"$STATE/env"
  log "$NODE_COUNT node(s) Ready in $((SECONDS - started)) s: $(xargs <"$STATE/nodes.list")"
  env_vars
}

env_vars() {
  echo "export KUBECONFIG=$STATE/kubeconfig"
  echo "export SOKO_CLUSTER_DIR=$STATE"
  echo "export SOKO_CLUSTER_NODE=$(node_name 1)"
  echo "export SOKO_CLUSTER_NODES=$NODE_COUNT"
  echo "export SOKO_CLUSTER_IMAGE_REGISTRY=$IMAGE_REGISTRY"
  echo "export SOKO_CLUSTER_OLM_MANIFESTS=$IMAGES_DIR/olm"
  echo "export SOKO_CLUSTER_OLM_IMAGE=$(olm_image)"
}

# --- teardown -------------------------------------------------------------------------------------

# pids_in_mountns FILE: every process whose mount namespace is the one bound at FILE.
pids_in_mountns() {
  local ns f pid
  [ -e "$1" ] && ns=$(stat -L -c %i "$1" 2>/dev/null) || return 0
  for f in /proc/[0-9]*/ns/mnt; do
    [ "$(stat -L -c %i "$f" 2>/dev/null)" = "$ns" ] && pid=${f#/proc/} && echo "${pid%%/*}"
  done
}

# Every process of the cluster: those it started, those in a node's network namespace or mount
# namespace (containerd's shims), those in the pods' cgroups, and all their descendants.
cluster_pids() {
  local f i netns
  for f in "$STATE"/pids/*.pid; do [ -f "$f" ] && cat "$f"; done
  for ((i = 1; i <= MAX_NODES; i++)); do
    netns=$(node_netns "$i")
    [ -e "/run/netns/$netns" ] && ip netns pids "$netns" 2>/dev/null
    pids_in_mountns "$(node_mnt "$i")"
  done
  find /sys/fs/cgroup/*/soko-node* -name cgroup.procs -exec cat {} + 2>/dev/null || true
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

# The cluster's loop devices: the pools' own (their images are in $STATE) and every device whose
# backing file lives on a pool's filesystem. The second kind is found by device number, not by
# path: a device attached inside a container that is gone shows its file relative to a mount that
# no longer exists ("/images/vol-....img").
cluster_loops() {
  losetup -l -n -O NAME,MAJ:MIN,BACK-MAJ:MIN,BACK-FILE 2>/dev/null | awk -v s="$STATE/" '
    { name[NR] = $1; back[NR] = $3; file[NR] = $4 }
    index($4, s) == 1 { pool[$2] = 1 }
    END { for (i = 1; i <= NR; i++) if (index(file[i], s) == 1 || back[i] in pool) print name[i] }'
}

# The nodes' cgroups, deepest first.
cluster_cgroups() {
  find /sys/fs/cgroup/*/soko-node* -depth -type d 2>/dev/null || true
}

release_namespaces() {
  local dev dir i mnt
  for ((i = 1; i <= MAX_NODES; i++)); do
    mnt=$(node_mnt "$i")
    [ -e "$mnt" ] || continue
    umount "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null || true
  done
  mountpoint -q "$MNT_DIR" && umount -l "$MNT_DIR"
  rm -rf "$MNT_DIR"
  # The volumes' loop devices first: they hold files on the pool's filesystem, whose own loop
  # device goes once nothing holds it.
  for _ in 1 2 3; do
    while read -r dev; do [ -n "$dev" ] && losetup -d "$dev" 2>/dev/null; done < <(cluster_loops)
    [ -z "$(cluster_loops)" ] && break
    sleep 1
  done
  cluster_cgroups | while read -r dir; do rmdir "$dir" 2>/dev/null || true; done
  for ((i = 1; i <= MAX_NODES; i++)); do ip netns del "$(node_netns "$i")" 2>/dev/null || true; done
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
  local problems=0 pids
  pids=$(cluster_pids | sort -u | xargs)
  [ -z "$pids" ] || { echo "processes left: $pids"; problems=1; }
  [ -z "$(cluster_loops)" ] || { echo "loop devices left: $(cluster_loops | xargs)"; problems=1; }
  ip netns list | grep -qE "^($NETNS|$NETNS-soko-node-[a-z]|$SINK)( |$)" &&
    { echo "network namespaces left"; problems=1; }
  grep -qE " ($MNT_DIR|/var/lib/soko|/var/lib/kubelet)" /proc/self/mounts && { echo "mounts left"; problems=1; }
  [ -z "$(cluster_cgroups)" ] || { echo "cgroups left: $(cluster_cgroups | xargs)"; problems=1; }
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
  rm -rf "$STATE/pids" "$STATE/nodes" "$STATE/etcd" "$STATE/api.sock" "$STATE/disks" \
    "$STATE/nodes.list" "$STATE/node-init" "$STATE/ssh" "$STATE/node-bin"
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
images) build_node_images && build_fio_image && build_olm_image ;;
env) cat "$STATE/env" ;;
nodes) cat "$STATE/nodes.list" ;;
usage) usage ;;
restart) restart "${2:?restart what? containerd or kubelet}" "${3:-}" ;;
ctr) shift && ctr "$@" ;;
statfs) statfs "${2:?which node}" "${3:?which path}" ;;
mount-disk) mount_disk "${2:?which node}" "${3:?where}" "${4:?its size}" "${5:-xfs}" ;;
mounts) mounts "${2:?which node}" ;;
ls) list "${2:?which node}" "${3:?which folder}" ;;
occurrences) occurrences "${2:?which node}" "${3:?which file}" "${4:?which text}" ;;
stop-node) stop_node "${2:?which node}" ;;
start-node) start_node_again "${2:?which node}" ;;
umount-disk) umount_disk "${2:?which node}" "${3:?where}" ;;
ssh) shift && ssh_node "${1:?which node}" "${@:2}" ;;
client) shift && client "${@:?which command}" ;;
unit) unit_request "${2:?which node}" ;;
*) die "usage: hack/local-cluster.sh up|down|images|env|nodes|usage|restart containerd|kubelet [NODE]|ctr [--node NODE] ARGS...|statfs NODE PATH|mount-disk NODE PATH SIZE [xfs|btrfs]|umount-disk NODE PATH|mounts NODE|ls NODE DIR|occurrences NODE FILE TEXT|stop-node NODE|start-node NODE|ssh NODE COMMAND|client COMMAND" ;;
esac
