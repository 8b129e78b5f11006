#!/usr/bin/env bash
# Kubernetes' own External Storage e2e suite against Soko on the local cluster: e2e.test and ginkgo
# built from the pinned k8s.io/kubernetes (hack/tools.sh), the driver installed with `helm install`
# as the README says (test/k8s-e2e/values.yaml), one run per driver definition
# (test/k8s-e2e/drivers/*.yaml)
# and pass, and per pass one line `conformance [DEFINITION/PASS]: N passed, N failed, N skipped`
# (skipped: specs that ran and skipped themselves, e.g. for a capability the definition lacks).
#
#   hack/conformance.sh [full|ci|gate]   full (make conformance): every pass, then the provisioning
#                                        gate; ci (make test): the selection of CI_FOCUS below, which
#                                        fits CI's time budget; gate: the provisioning gate alone
#
# The skip rules, each with its reason, are test/k8s-e2e/skips. Reports: target/conformance/; each
# pass's JUnit XML also goes to target/test-reports/conformance/DEFINITION/PASS.xml (CI's tier
# conformance:DEFINITION:PASS). A pass that wrote no report has failed.
# Environment: CONFORMANCE_PROCS (parallel ginkgo processes, default 4), CONFORMANCE_DEFINITIONS
# (space-separated definition names, default all), CONFORMANCE_FOCUS (a regex that replaces the ci
# selection's, to rerun chosen specs); .ci/run refuses the last two: CI runs its selection whole.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
require_root "Kubernetes' storage suite on the local cluster"
ROOT=$(soko_root)
BIN=${SOKO_CACHE:-$HOME/.cache/soko}/bin
SUITE=$ROOT/test/k8s-e2e
REPORTS=$ROOT/target/conformance
JUNIT=$(test_reports conformance)
cluster=$ROOT/hack/local-cluster.sh
selection=${1:-full}
procs=${CONFORMANCE_PROCS:-4}

# What `make test` runs: per definition, specs that together exercise every declared capability
# (provisioning with data sources, snapshots and restores, expansion offline and online of block
# volumes and of xfs (ext4's online growth where root holds CAP_SYS_RESOURCE), block and
# filesystem modes, multi-pod access, fsGroup, subPath, capacity, ReadWriteOncePod, ephemeral
# volumes, IO limits, group snapshots), at a small fraction of the full run's time.
CI_FOCUS=(
  'Dynamic PV \(default fs\)\] provisioning should provision storage with (pvc|snapshot) data source( \[Feature:VolumeSnapshotDataSource\])?$'
  'Dynamic PV \(block volmode\)\] provisioning should provision storage with snapshot data source \[Feature:VolumeSnapshotDataSource\]$'
  'Dynamic PV \(default fs\)\] provisioning should mount multiple PV pointing to the same storage'
  # The mount flags the definitions declare, all in one class.
  'Dynamic PV \(default fs\)\] provisioning should provision storage with mount options'
  '(Dynamic|Pre-provisioned) Snapshot \(delete policy\)\] snapshottable.*after modifying source data'
  'Dynamic PV \((default fs|block volmode)\)\(allowExpansion\)\] volume-expand'
  # Filesystem growth on every change: xfs grows offline and online on any host, while a mounted
  # ext4 needs CAP_SYS_RESOURCE (test/k8s-e2e/skips). `[Slow]` specs are selected like any other.
  'Dynamic PV \(xfs\)\] \[Slow\] volume-expand'
  'Dynamic PV \((ext4|xfs|block volmode)\)\] (\[Slow\] )?volumes should store data'
  'Dynamic PV \(default fs\)\] (volumes should allow exec|capacity provides|subPath should support existing directory$)'
  'Dynamic PV \(default fs\)\] fsgroupchangepolicy \(Always\)\[LinuxOnly\], pod created with an initial fsgroup, new'
  'Dynamic PV \(default fs\)\] read-write-once-pod should block'
  'Dynamic PV \(xfs\)\] \[Slow\] multiVolume \[Slow\] should concurrently access the volume and (restored snapshot|its clone) from pods on the same node'
  'Dynamic PV \((ext4|block volmode)\)\] multiVolume \[Slow\] should concurrently access the single volume from pods on the same node$'
  'Generic Ephemeral-volume \(default fs\) \(late-binding\)\] ephemeral should create read/write'
  # Two nodes: a class whose allowedTopologies names one node provisions there, and a pod that
  # the class's topology conflicts with is never scheduled.
  'Dynamic PV \((delayed|immediate) binding\)\] topology should'
  'Dynamic PV \(filesystem volmode\)\] volumeLimits should verify'
  # The node checked from a hostPID pod (nsenter into PID 1's mount namespace: the node's).
  'Dynamic PV \((default fs|block volmode)\)\] volumeMode should not mount / map unused volumes in a pod'
  # IO limits (VolumeAttributesClass): created with a class, a class set and changed live, an
  # invalid class refused and replaced, the class's protection finalizer.
  'Dynamic PV \((default fs|block volmode)\)\] volume-modify \['
  # Group snapshots: dynamic and pre-provisioned (delete and retain), each group restored and checked.
  'volumegroupsnapshottable \[Feature:volumegroupsnapshot\]'
)

# The [Disruptive] specs of CI's selection, in a pass of their own, one spec at a time: each stops
# or restarts a node's kubelet over SSH. A mounted volume read back after a kubelet restart; a
# mount (with a subPath) and a block volume whose pods were deleted while the kubelet was down
# cleaned up when it returns; `make conformance` runs all of them.
CI_DISRUPTIVE=(
  'Dynamic PV \(filesystem volmode\)\] disruptive \[Disruptive\] \[LinuxOnly\] Should test that pv written before kubelet restart is readable after restart'
  'Dynamic PV \(default fs\)\] subPath should unmount if pod is gracefully deleted while kubelet is down'
  'Dynamic PV \(block volmode\)\] disruptive \[Disruptive\] \[LinuxOnly\] Should test that pv used in a pod that is force deleted while the kubelet is down cleans up'
)

# pass NAME PROCS FOCUS [SKIP...]: the passes of a full run.
# shellcheck disable=SC2317 # called as "passes_$selection" in main
passes_full() {
  pass parallel "$procs" 'External.Storage' '\[Serial\]' '\[Feature:' '\[Disruptive\]'
  pass serial 1 'External.Storage.*\[Serial\]' '\[Feature:' '\[Disruptive\]'
  pass features "$procs" 'External.Storage.*\[Feature:' '\[Serial\]' '\[Disruptive\]'
  pass features-serial 1 'External.Storage.*(\[Feature:.*\[Serial\]|\[Serial\].*\[Feature:)' '\[Disruptive\]'
  # Specs that stop or restart a node's kubelet: one at a time, beside nothing else.
  pass disruptive 1 'External.Storage.*\[Disruptive\]'
}

# The provisioning gate (test/k8s-e2e/gate/provisioning.yaml), after the definitions' passes.
pass_gate() {
  definition=gate/provisioning
  pass gate 1 'External.Storage.*should provision volumes at scale within performance constraints'
  python3 "$ROOT/hack/conformance-report.py" --metrics "$REPORTS/provisioning-gate/report.json" |
    tee -a "$REPORTS/summary.txt"
}

# shellcheck disable=SC2317 # called as "passes_$selection" in main
passes_ci() {
  if [ -n "${CONFORMANCE_FOCUS:-}" ]; then
    # A rerun of chosen specs: one pass, one spec at a time when it chooses [Disruptive] ones.
    local nprocs=$procs
    [[ $CONFORMANCE_FOCUS != *Disruptive* ]] || nprocs=1
    pass selection "$nprocs" "External.Storage.*($CONFORMANCE_FOCUS)" '\[Serial\]'
    return
  fi
  pass selection "$procs" "External.Storage.*($(IFS='|' && echo "${CI_FOCUS[*]}"))" '\[Serial\]' '\[Disruptive\]'
  pass disruptive 1 "External.Storage.*($(IFS='|' && echo "${CI_DISRUPTIVE[*]}"))"
}

# The skip rules of test/k8s-e2e/skips that apply to definition $1 on this host, one per line.
skip_rules() {
  local when defs regex
  while read -r when defs regex; do
    case $when in '' | '#'*) continue ;; esac
    [ "$defs" = '*' ] || [[ ",$defs," == *",$1,"* ]] || continue
    case $when in
    always) ;;
    no-cap-sys-resource) has_cap_sys_resource && continue ;;
    several-nodes) ((SOKO_CLUSTER_NODES > 1)) || continue ;;
    *) die "test/k8s-e2e/skips: unknown condition '$when'" ;;
    esac
    printf '%s\n' "$regex"
  done <"$SUITE/skips"
}

# CAP_SYS_RESOURCE (capability 24) in this shell's bounding set, which the node's processes share.
has_cap_sys_resource() {
  local bnd
  bnd=$(awk '/^CapBnd:/ {print $2}' /proc/self/status)
  (((0x$bnd >> 24) & 1))
}

# The images the suite's specs use, under the names the repo list gives them: agnhost from its
# pinned source, the cluster's pause, glibc-dns-testing (the multi-pod specs write with GNU dd's
# `oflag=nocache`, which busybox lacks) as busybox's tools with this machine's GNU dd and dash as
# `sh` (busybox's shell would run its own dd), with the C library they link, and busybox (Debian's static build, no entrypoint, `sh` as its command like the upstream
# image) for every image the storage specs only run a shell in.
import_suite_images() {
  local images=${SOKO_CACHE:-$HOME/.cache/soko}/node-images ref name tmp
  local -a links=() glibc_links=() glibc_files=()
  mkdir -p "$images"
  # Made again when agnhost or this script (which says what goes in them) changed.
  if [ ! -f "$images/e2e-glibc.oci.tar" ] || [ "$BIN/agnhost" -nt "$images/e2e-agnhost.oci.tar" ] ||
    [ "${BASH_SOURCE[0]}" -nt "$images/e2e-glibc.oci.tar" ]; then
    while read -r name; do
      [ "$name" = busybox ] || links+=(--symlink "/bin/$name:busybox")
      case $name in busybox | dd | sh) ;; *) glibc_links+=(--symlink "/bin/$name:busybox") ;; esac
    done < <(/bin/busybox --list)
    mapfile -t glibc_files < <(oci_image_libraries /bin/dd /bin/dash)
    python3 "$ROOT/hack/oci-image.py" --name soko.local/e2e-stand-in/glibc:latest \
      --out "$images/e2e-glibc.oci.tar" --file /bin/busybox:/bin/busybox "${glibc_links[@]}" \
      --file /bin/dd:/bin/dd --file /bin/dash:/bin/sh "${glibc_files[@]}" --dir /tmp:1777 \
      --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd sh
    python3 "$ROOT/hack/oci-image.py" --name soko.local/e2e-stand-in/agnhost:latest \
      --out "$images/e2e-agnhost.oci.tar" --file "$(readlink -f "$BIN/agnhost"):/agnhost" \
      --symlink /agnhost-2:agnhost --file /bin/busybox:/bin/busybox "${links[@]}" --dir /tmp:1777 \
      --dir /uploads:0755 --entrypoint /agnhost --cmd pause
    python3 "$ROOT/hack/oci-image.py" --name soko.local/e2e-stand-in/busybox:latest \
      --out "$images/e2e-busybox.oci.tar" --file /bin/busybox:/bin/busybox "${links[@]}" \
      --dir /tmp:1777 --cmd sh
  fi
  tmp=$(mktemp)
  KUBE_TEST_REPO_LIST=$SUITE/repo-list.yaml "$BIN/e2e.test" -list-images >"$tmp"
  local node
  # Every node: the scheduler may put any spec's pod on any of them.
  while read -r node; do
    for name in agnhost busybox glibc; do
      bash "$cluster" ctr --node "$node" images import --platform linux/amd64 "$images/e2e-$name.oci.tar" \
        </dev/null >/dev/null 2>>"$REPORTS/ctr.log" || die "cannot import $images/e2e-$name.oci.tar ($REPORTS/ctr.log)"
    done
    while read -r ref; do
      case $ref in
      */agnhost:*) name=soko.local/e2e-stand-in/agnhost:latest ;;
      */pause:*) name=$SOKO_CLUSTER_IMAGE_REGISTRY/pause:3.10 ;;
      */glibc-dns-testing:*) name=soko.local/e2e-stand-in/glibc:latest ;;
      *) name=soko.local/e2e-stand-in/busybox:latest ;;
      esac
      bash "$cluster" ctr --node "$node" images tag --force "$name" "$ref" </dev/null >/dev/null 2>>"$REPORTS/ctr.log" ||
        die "cannot name $name $ref ($REPORTS/ctr.log)"
    done <"$tmp"
  done < <(bash "$cluster" nodes)
  say "$(wc -l <"$tmp") suite images named on each of $SOKO_CLUSTER_NODES nodes"
  rm -f "$tmp"
}

install_soko() {
  "$BIN/helm" install soko "$ROOT/helm/soko" -n soko-operator --create-namespace \
    -f "$SUITE/values.yaml" --set "image.registry=$SOKO_CLUSTER_IMAGE_REGISTRY" \
    --set "imageRegistry=$SOKO_CLUSTER_IMAGE_REGISTRY" --wait --timeout 3m >/dev/null
  "$BIN/kubectl" wait storagecluster/soko --for=condition=Ready --timeout=180s >/dev/null ||
    die "the StorageCluster did not become Ready: $("$BIN/kubectl" get storagecluster soko -o yaml)"
}

# pass NAME PROCS FOCUS [SKIP...] runs one pass of driver definition $definition (its path below
# test/k8s-e2e, without .yaml).
pass() {
  local name=$1 nprocs=$2 focus=$3 out label junit
  shift 3
  local -a skips=() rule
  for rule in "$@"; do skips+=(--skip "$rule"); done
  while IFS= read -r rule; do skips+=(--skip "$rule"); done < <(skip_rules "${definition##*/}")
  label=${definition##*/}/$name
  out=$REPORTS/${label/\//-}
  mkdir -p "$out"
  junit=$(suite_pass_report conformance "$label")
  started_reports+=("$out/report.json")
  say "$label"
  printf 'focus: %s\nskip: %s\n' "$focus" "${skips[*]}" >"$out/selection.txt"
  # The suite's exit code is the pass's verdict, read from the report below. It runs in the
  # cluster's network (the local cluster's `client`), where the nodes' SSH servers are, with the
  # cluster's SSH key and its in-network KUBECONFIG.
  KUBE_TEST_REPO_LIST=$SUITE/repo-list.yaml bash "$cluster" client "$BIN/ginkgo" --procs="$nprocs" --no-color \
    --silence-skips --timeout=3h --focus="$focus" "${skips[@]}" --output-dir="$out" \
    --json-report=report.json --junit-report=junit.xml "$BIN/e2e.test" -- \
    -kubectl-path="$BIN/kubectl" -provider=skeleton \
    -storage.testdriver="$SUITE/$definition.yaml" -repo-root="$ROOT" -report-dir="$out" >"$out/ginkgo.log" 2>&1 || true
  python3 "$ROOT/hack/conformance-report.py" "$label" "$out/report.json" | tee -a "$REPORTS/summary.txt"
  if [ -f "$out/junit.xml" ]; then cp "$out/junit.xml" "$junit"; fi
}

main() {
  local tool
  for tool in e2e.test ginkgo agnhost helm kubectl; do
    [ -x "$BIN/$tool" ] || die "$tool is missing (run: hack/tools.sh e2e.test ginkgo agnhost helm kubectl)"
  done
  case $selection in full | ci | gate) ;; *) die "usage: hack/conformance.sh [full|ci|gate]" ;; esac
  rm -rf "$REPORTS" "$JUNIT" && mkdir -p "$REPORTS"
  # The commit whose figures these are: a release records the run of its own commit, on a clean
  # tree (docs/testing.md#releases).
  printf 'commit %s, %s\n' "$(git -C "$ROOT" rev-parse HEAD)" \
    "$(if [ -z "$(git -C "$ROOT" status --porcelain)" ]; then echo clean tree; else echo modified tree; fi)" |
    tee "$REPORTS/summary.txt"
  trap 'bash "$cluster" down' EXIT
  # Two nodes, as a cluster has: the specs of topology, of restores and clones whose pod lands on
  # the other node, of groups spread over both.
  export SOKO_CLUSTER_NODES=${SOKO_CLUSTER_NODES:-2}
  SOKO_CLUSTER_POOL_SIZE=${SOKO_CLUSTER_POOL_SIZE:-24G} bash "$cluster" up >/dev/null
  eval "$(bash "$cluster" env)"
  local node
  while read -r node; do
    bash "$cluster" mount-disk "$node" /var/lib/soko/fast 4G btrfs </dev/null
  done < <(bash "$cluster" nodes)
  import_suite_images
  install_soko
  local definition file
  started_reports=()
  for file in "$SUITE"/drivers/*.yaml; do
    [ "$selection" != gate ] || break
    definition=drivers/$(basename "$file" .yaml)
    [ -z "${CONFORMANCE_DEFINITIONS:-}" ] || [[ " $CONFORMANCE_DEFINITIONS " == *" ${definition#drivers/} "* ]] ||
      continue
    "passes_$selection"
  done
  [ "$selection" = ci ] || pass_gate
  # Every pass that started, so that one which wrote no report fails the check.
  python3 "$ROOT/hack/conformance-report.py" --check "${started_reports[@]}"
}

# On one line, so that editing this file while it runs cannot change what runs after main.
main "$@"; exit
