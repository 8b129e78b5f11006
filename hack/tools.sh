#!/usr/bin/env bash
# Builds the pinned Go tools the tests need, from the Go module proxy by module name, into a cache
# outside the repository, and reuses them. Pins live in hack/versions.env.
#
#   hack/tools.sh NAME...   build the named tools unless already cached (then it returns in < 0.3 s)
#   hack/tools.sh all       build everything the module proxy serves (skips UNSERVED_TOOLS, warns)
#   hack/tools.sh --list    print the tool names
#
# Layout under ${SOKO_CACHE:-$HOME/.cache/soko}:
#   tools/NAME/VERSION-RECIPEHASH/NAME   one pinned build; a changed pin or recipe gets a new dir
#   bin/NAME                             symlink to the pinned build
#   wrappers/...                         generated wrapper modules (go.mod/go.sum only)
#   logs/NAME.log                        output of the last build of NAME
#   crds/snapshot/                       VolumeSnapshot CRDs of the pinned external-snapshotter
#   olm/manifests/                       OLM's Helm chart and upstream's values for it, of the pin
#   kube-api-test/k8s/1.36.3-linux-amd64/{etcd,kube-apiserver,kubectl}   see below
#
# kube-api-test (io.fabric8:kube-api-test 7.5.2) — what Java tests pass. `hack/tools.sh kube-api-test`
# makes the folder that kube-api-test's BinaryManager looks up as
#   <testDir>/k8s/<version>-<os>-<arch>     holding etcd, kube-apiserver, kubectl
# so Java tests use
#   test dir: $SOKO_CACHE/kube-api-test        (default SOKO_CACHE: $HOME/.cache/soko)
#   version:  "1.36.3"                         (KUBERNETES_VERSION without the leading "v")
# e.g. KubeAPIServerConfigBuilder.anAPIServerConfig().withTestDir(dir).withApiServerVersion("1.36.3")
#        .withOfflineMode(true).build()
# or, with @EnableKubeAPIServer(kubeAPIVersion = "1.36.3"), the environment variable
# KUBE_API_TEST_DIR=$SOKO_CACHE/kube-api-test. Do not set KUBE_API_TEST_OFFLINE_MODE in the environment:
# 7.5.2 casts the String to Boolean and throws ClassCastException; an existing version folder is
# used without any download anyway. kube-apiserver writes its certificates into the test dir, so it
# must be writable.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=versions.env
source "$here/versions.env"
cache=${SOKO_CACHE:-$HOME/.cache/soko}

# Bump when the build recipe changes in a way that must rebuild cached tools.
RECIPE_REV=1
# Never download another Go toolchain: a Go too old for a pin fails with a clear message instead.
export GOTOOLCHAIN=local

BUILT_TOOLS=(csi-sanity kube-apiserver etcd kubectl helm csi-provisioner csi-resizer csi-snapshotter
  snapshot-controller kube-controller-manager operator-verify kube-scheduler kubelet kube-proxy
  containerd containerd-shim-runc-v2 ctr e2e.test ginkgo agnhost olm catalog package-server
  copy-content cpb opm grpc_health_probe local-path-provisioner csi-snapshot-metadata velero
  velero-plugin-for-aws minio)
# Pinned, but every version of their module is refused by the module proxy reachable here
# (403 "This module version is not available"). Named explicitly they are attempted and fail loudly;
# `all` skips them with a warning.
UNSERVED_TOOLS=(csi-node-driver-registrar livenessprobe hostpathplugin)
# Not binaries: a folder layout and files taken from a module.
DERIVED=(kube-api-test snapshot-crds olm-manifests)

say() { printf '==> %s\n' "$*" >&2; }
fail() {
  printf 'tools.sh: %s\n' "$*" >&2
  exit 1
}

# Sets mod, ver, pkg, ldflags and tags for tool $1; testbin=1 marks a test binary (`go test -c`);
# replaces: `go mod edit -replace` arguments for a dependency version the module proxy refuses.
recipe() {
  ldflags="" tags="" testbin="" replaces=""
  case $1 in
  csi-sanity)
    mod=$CSI_SANITY_MODULE ver=$CSI_SANITY_VERSION pkg=$mod/cmd/csi-sanity ;;
  kube-apiserver | kube-controller-manager | kubectl | kube-scheduler | kubelet | kube-proxy)
    mod=$KUBERNETES_MODULE ver=$KUBERNETES_VERSION pkg=$mod/cmd/$1
    ldflags=$(kubernetes_version_ldflags) ;;
  e2e.test)
    # Kubernetes' end-to-end suite (the External Storage tests among it) is a Go test binary.
    mod=$KUBERNETES_MODULE ver=$KUBERNETES_VERSION pkg=$mod/test/e2e testbin=1
    ldflags=$(kubernetes_version_ldflags) ;;
  ginkgo)
    # The suite's runner, at the version k8s.io/kubernetes requires (the wrapper's build list).
    mod=$KUBERNETES_MODULE ver=$KUBERNETES_VERSION pkg=github.com/onsi/ginkgo/v2/ginkgo ;;
  agnhost)
    # The suite's all-purpose test image program.
    mod=$KUBERNETES_MODULE ver=$KUBERNETES_VERSION pkg=$mod/test/images/agnhost ;;
  etcd)
    # The module's root package is the etcd server's main package.
    mod=$ETCD_MODULE ver=$ETCD_VERSION pkg=$mod ;;
  helm)
    mod=$HELM_MODULE ver=$HELM_VERSION pkg=$mod/cmd/helm
    ldflags="-X $mod/internal/version.version=$ver -X $mod/internal/version.gitTreeState=clean" ;;
  csi-provisioner)
    mod=$CSI_PROVISIONER_MODULE ver=$CSI_PROVISIONER_VERSION pkg=$mod/cmd/csi-provisioner
    ldflags="-X main.version=$ver" ;;
  csi-resizer)
    mod=$CSI_RESIZER_MODULE ver=$CSI_RESIZER_VERSION pkg=$mod/cmd/csi-resizer
    ldflags="-X main.version=$ver" ;;
  csi-snapshotter | snapshot-controller)
    mod=$CSI_SNAPSHOTTER_MODULE ver=$CSI_SNAPSHOTTER_VERSION pkg=$mod/cmd/$1
    ldflags="-X main.version=$ver" ;;
  csi-node-driver-registrar)
    mod=$CSI_NODE_DRIVER_REGISTRAR_MODULE ver=$CSI_NODE_DRIVER_REGISTRAR_VERSION
    pkg=$mod/cmd/csi-node-driver-registrar ldflags="-X main.version=$ver" ;;
  livenessprobe)
    mod=$LIVENESSPROBE_MODULE ver=$LIVENESSPROBE_VERSION pkg=$mod/cmd/livenessprobe
    ldflags="-X main.version=$ver" ;;
  hostpathplugin)
    mod=$HOSTPATHPLUGIN_MODULE ver=$HOSTPATHPLUGIN_VERSION pkg=$mod/cmd/hostpathplugin
    ldflags="-X main.version=$ver" ;;
  containerd | containerd-shim-runc-v2 | ctr)
    # Without the snapshotters this machine cannot use (device-mapper, zfs) or does not need.
    mod=$CONTAINERD_MODULE ver=$CONTAINERD_VERSION pkg=$mod/cmd/$1
    tags="no_btrfs no_devmapper no_zfs urfave_cli_no_docs"
    ldflags="-X $mod/version.Version=$ver" ;;
  olm | catalog | package-server | copy-content)
    mod=$OLM_MODULE ver=$OLM_VERSION pkg=$mod/cmd/$1
    ldflags="-X $mod/pkg/version.OLMVersion=$ver" ;;
  cpb)
    # The bundle unpacker's copier, which OLM's unpack jobs run inside each bundle image.
    mod=$OLM_MODULE ver=$OLM_VERSION pkg=$mod/util/cpb ;;
  opm)
    # Without cgo its SQLite catalogs do not work; Soko's catalog is file-based, which needs none.
    # Image signatures are checked with Go's OpenPGP instead of the C library gpgme (upstream's tag).
    mod=$OPM_MODULE ver=$OPM_VERSION pkg=$mod/cmd/opm tags="containers_image_openpgp"
    ldflags="-X $mod/cmd/opm/version.gitCommit=$ver -X $mod/cmd/opm/version.opmVersion=$ver" ;;
  grpc_health_probe)
    mod=$GRPC_HEALTH_PROBE_MODULE ver=$GRPC_HEALTH_PROBE_VERSION pkg=$mod ;;
  local-path-provisioner)
    # The module's root package is its main package.
    mod=$LOCAL_PATH_PROVISIONER_MODULE ver=$LOCAL_PATH_PROVISIONER_VERSION pkg=$mod ;;
  csi-snapshot-metadata)
    mod=$SNAPSHOT_METADATA_MODULE ver=$SNAPSHOT_METADATA_VERSION pkg=$mod/cmd/$1
    ldflags="-X main.version=$ver" ;;
  velero)
    mod=$VELERO_MODULE ver=$VELERO_VERSION pkg=$mod/cmd/velero
    ldflags="-X $mod/pkg/buildinfo.Version=$ver"
    # The proxy refuses k8s.io/cli-runtime v0.33.12 (403), which Velero requires; v0.33.10, a patch
    # of the same release line, is served.
    replaces="k8s.io/cli-runtime=k8s.io/cli-runtime@$VELERO_CLI_RUNTIME_VERSION" ;;
  velero-plugin-for-aws)
    mod=$VELERO_AWS_PLUGIN_MODULE ver=$VELERO_AWS_PLUGIN_VERSION pkg=$mod/velero-plugin-for-aws ;;
  minio)
    # The module's root package is the server's main package.
    mod=$MINIO_MODULE ver=$MINIO_VERSION pkg=$mod ;;
  operator-verify)
    mod=$OPERATOR_VERIFY_MODULE ver=$OPERATOR_VERIFY_VERSION pkg=$mod/cmd/operator-verify ;;
  *) fail "unknown tool '$1' (hack/tools.sh --list shows the names)" ;;
  esac
}

# What `kube-apiserver --version` and the /version endpoint report; Kubernetes' own release build
# sets the same variables (without them the server calls itself v0.0.0-master).
kubernetes_version_ldflags() {
  local v=$KUBERNETES_VERSION minor flags="" p
  minor=${v#v1.}
  minor=${minor%%.*}
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags+=" -X $p.gitVersion=$v -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
  done
  echo "$flags"
}

go_version() {
  if [ -z "${GO_VERSION:-}" ]; then
    GO_VERSION=$(go env GOVERSION) || fail "the Go toolchain is missing (go env GOVERSION failed)"
  fi
  echo "$GO_VERSION"
}

short_hash() { sha256sum | cut -c1-12; }

# Directory of the pinned build of tool $1 (recipe must have been called).
tool_dir() {
  local key
  key=$(printf '%s\n' "$RECIPE_REV" "$mod" "$ver" "$pkg" "$ldflags" ${tags:+"$tags"} ${testbin:+"$testbin"} ${replaces:+"$replaces"} "${KUBERNETES_STAGING_VERSION}" \
    "$(go_version)" "$(cat "$here/tools/wrapper.go.mod.in")" | short_hash)
  echo "$cache/tools/$1/$ver-$key"
}

# Points $cache/bin/$1 at $2 atomically.
link_bin() {
  mkdir -p "$cache/bin"
  ln -sfn "$2" "$cache/bin/.$1.tmp"
  mv -Tf "$cache/bin/.$1.tmp" "$cache/bin/$1"
}

# Prints the go.mod path of module $1@$2, downloading the module through the proxy.
module_gomod() {
  local json
  json=$(cd "${TMPDIR:-/tmp}" && GOFLAGS=-mod=mod go mod download -json "$1@$2" 2>&1) || {
    printf '%s\n' "$json" >&2
    return 1
  }
  printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p'
}

# Prints `-replace=OLD=NEW@VER` flags restating the replace directives of go.mod file $1 (of module
# version $2) for a wrapper module; see hack/tools/wrapper.go.mod.in for the rules.
restated_replaces() {
  local gomod=$1 version=$2 staging line old oldv new newv
  staging=$KUBERNETES_STAGING_VERSION
  go mod edit -print "$gomod" | awk '
    /^replace \($/ { block = 1; next }
    block && /^\)$/ { block = 0; next }
    { sub(/\/\/.*/, "") }
    /^replace / && /=>/ { sub(/^replace /, ""); print; next }
    block && /=>/ { print }' |
    while IFS= read -r line; do
      read -r old oldv <<<"${line%%=>*}"
      read -r new newv <<<"${line#*=>}"
      case $new in
      *FORBIDDEN*) continue ;; # upstream guard against importing a module; nothing to restate
      ./staging/src/* | staging/src/*) newv=$staging new=$old ;;
      .* | /*) newv=$version new=$old ;; # a sibling module of the same repository and release
      esac
      printf -- '-replace=%s%s=%s%s\n' "$old" "${oldv:+@$oldv}" "$new" "${newv:+@$newv}"
    done
}

# Prints the wrapper module directory for $mod@$ver, creating it on first use.
wrapper_dir() {
  local dir gomod go_directive
  dir=$cache/wrappers/${mod//\//_}@$ver-$(printf '%s\n' "$RECIPE_REV" "$(cat "$here/tools/wrapper.go.mod.in")" ${replaces:+"$replaces"} | short_hash)
  if [ ! -f "$dir/go.mod" ]; then
    gomod=$(module_gomod "$mod" "$ver") || return 1
    [ -n "$gomod" ] || { echo "go mod download gave no go.mod for $mod@$ver" >&2; return 1; }
    go_directive=$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$gomod")
    rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
    sed -e "s|@MODULE@|$mod|g" -e "s|@VERSION@|$ver|g" -e "s|@GO@|${go_directive:-1.22}|g" \
      "$here/tools/wrapper.go.mod.in" >"$dir.tmp/go.mod"
    local -a flags
    mapfile -t flags < <(restated_replaces "$gomod" "$ver")
    local replace
    for replace in $replaces; do
      flags+=("-replace=$replace")
    done
    if [ ${#flags[@]} -gt 0 ]; then
      (cd "$dir.tmp" && go mod edit "${flags[@]}") || return 1
    fi
    rm -rf "$dir" && mv "$dir.tmp" "$dir"
  fi
  echo "$dir"
}

# Extra link flags that need the wrapper's resolved build list.
late_ldflags() {
  case $1 in
  helm) # Helm's default .Capabilities.KubeVersion follows its client-go, as in Helm's Makefile.
    local cg minor
    cg=$(cd "$2" && GOFLAGS=-mod=mod go list -m -f '{{.Version}}' k8s.io/client-go) || return 1
    minor=${cg#v0.}
    minor=${minor%%.*}
    echo "-X $mod/pkg/chartutil.k8sVersionMajor=1 -X $mod/pkg/chartutil.k8sVersionMinor=$minor" \
      "-X $mod/pkg/lint/rules.k8sVersionMajor=1 -X $mod/pkg/lint/rules.k8sVersionMinor=$minor" ;;
  esac
}

# Sets CPU_SECONDS to the user + system CPU seconds of the processes this script has waited for (what
# a build costs on idle cores). `times` must run in this shell, not in a $(...) subshell, to see them.
children_cpu_seconds() {
  times >"$cache/logs/.times.$$"
  CPU_SECONDS=$(awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/)
    printf "%d", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$cache/logs/.times.$$")
  rm -f "$cache/logs/.times.$$"
}

# Succeeds when binary $1 answers --help, --version or -h with exit code 0.
runs() {
  local flag
  for flag in --help --version -h; do
    "$1" "$flag" >/dev/null 2>&1 </dev/null && return 0
  done
  echo "$1 was built but exits non-zero for --help, --version and -h"
  return 1
}

# `go build`, or for a test binary `go test -c` without vetting its ~2,800 dependency packages
# (minutes of work that checks nothing of ours).
go_build() {
  if [ -n "$testbin" ]; then
    go test -c -vet=off "$@"
  else
    go build "$@"
  fi
}

# Builds tool $1 into $2 (the versioned dir), logging to $cache/logs/$1.log.
build_tool() {
  local name=$1 dir=$2 log=$cache/logs/$1.log wrapper extra start
  local cpu0
  start=$(date +%s)
  mkdir -p "$cache/logs"
  children_cpu_seconds
  cpu0=$CPU_SECONDS
  say "building $name ($pkg @ $ver)"
  rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
  {
    wrapper=$(wrapper_dir) &&
      extra=$(late_ldflags "$name" "$wrapper") &&
      (cd "$wrapper" && GOFLAGS=-mod=mod CGO_ENABLED=0 go_build -trimpath ${tags:+-tags "$tags"} \
        -ldflags "-s -w $ldflags $extra" -o "$dir.tmp/$name" "$pkg") &&
      runs "$dir.tmp/$name"
  } >"$log" 2>&1 || {
    rm -rf "$dir.tmp"
    tail -n 25 "$log" >&2
    fail "building $name ($mod@$ver, package $pkg) failed; full log: $log"
  }
  rm -rf "$dir" && mv "$dir.tmp" "$dir"
  children_cpu_seconds
  say "built $name in $(($(date +%s) - start)) s wall, $((CPU_SECONDS - cpu0)) s CPU"
}

ensure_tool() {
  local name=$1 dir
  recipe "$name"
  dir=$(tool_dir "$name")
  if [ ! -x "$dir/$name" ]; then
    # Fetching the module first fails fast, without waiting for the build lock, when the module
    # proxy does not serve the pin.
    module_gomod "$mod" "$ver" >/dev/null ||
      fail "building $name failed: could not download $mod@$ver through the Go module proxy (output above)"
    # One build at a time: 2 cores gain nothing from parallel Go builds, and concurrent callers of
    # this script (other worktrees) must not build the same tool twice.
    exec 9>"$cache/.build.lock"
    flock 9
    [ -x "$dir/$name" ] || build_tool "$name" "$dir"
    flock -u 9
  fi
  [ "$(readlink "$cache/bin/$name" 2>/dev/null)" = "$dir/$name" ] || link_bin "$name" "$dir/$name"
}

# kube-api-test 7.5.2 starts etcd with --listen-client-urls/--advertise-client-urls
# http://0.0.0.0:PORT (every interface) and has no option to change that; tests here listen on
# loopback only. So its "etcd" is this small wrapper that rewrites 0.0.0.0 to 127.0.0.1 in the
# arguments and runs the pinned etcd (connections to 0.0.0.0 reach the loopback listener).
etcd_loopback_wrapper() { # REAL_ETCD
  cat <<WRAPPER
#!/bin/sh
# Generated by hack/tools.sh: runs $1 with every 0.0.0.0 listen address turned into 127.0.0.1.
n=\$#
for arg in "\$@"; do
  case \$arg in
  *0.0.0.0*) arg=\$(printf '%s' "\$arg" | sed 's/0\.0\.0\.0/127.0.0.1/g') ;;
  esac
  set -- "\$@" "\$arg"
done
shift "\$n"
exec "$1" "\$@"
WRAPPER
}

# kube-api-test's binary folder: the pinned kube-apiserver and kubectl (symlinks) and etcd behind
# the loopback wrapper above.
ensure_kube_api_test() {
  local name arch dir
  case $(uname -m) in # the mapping of kube-api-test's OSInfo
  aarch64) arch=arm64 ;;
  ppc64 | ppc64le) arch=ppc64le ;;
  *) arch=amd64 ;;
  esac
  dir=$cache/kube-api-test/k8s/${KUBERNETES_VERSION#v}-linux-$arch
  mkdir -p "$dir"
  for name in kube-apiserver kubectl; do
    ensure_tool "$name"
    recipe "$name"
    [ "$(readlink "$dir/$name" 2>/dev/null)" = "$(tool_dir "$name")/$name" ] ||
      ln -sfn "$(tool_dir "$name")/$name" "$dir/$name"
  done
  ensure_tool etcd
  recipe etcd
  local wrapper
  wrapper=$(etcd_loopback_wrapper "$(tool_dir etcd)/etcd")
  if [ -L "$dir/etcd" ] || [ "$(cat "$dir/etcd" 2>/dev/null)" != "$wrapper" ]; then
    rm -f "$dir/etcd"
    printf '%s\n' "$wrapper" >"$dir/etcd"
    chmod 0755 "$dir/etcd"
  fi
}

# The VolumeSnapshot (and VolumeGroupSnapshot) CRDs of the pinned external-snapshotter client module.
ensure_snapshot_crds() {
  local dir=$cache/crds/snapshot-$SNAPSHOT_CLIENT_VERSION src gomod
  if [ ! -f "$dir/snapshot.storage.k8s.io_volumesnapshots.yaml" ]; then
    gomod=$(module_gomod "$SNAPSHOT_CLIENT_MODULE" "$SNAPSHOT_CLIENT_VERSION") ||
      fail "snapshot-crds: cannot download $SNAPSHOT_CLIENT_MODULE@$SNAPSHOT_CLIENT_VERSION"
    src=$(cd "${TMPDIR:-/tmp}" && go mod download -json "$SNAPSHOT_CLIENT_MODULE@$SNAPSHOT_CLIENT_VERSION" |
      sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')/config/crd
    compgen -G "$src/*.storage.k8s.io_*.yaml" >/dev/null || fail "snapshot-crds: no CRD YAML in $src"
    rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
    cp "$src"/*.storage.k8s.io_*.yaml "$dir.tmp/"
    chmod u+w "$dir.tmp"/*.yaml # the module cache is read-only
    rm -rf "$dir" && mv "$dir.tmp" "$dir"
  fi
  ensure_snapshot_metadata_crd "$dir"
  [ "$(readlink "$cache/crds/snapshot" 2>/dev/null)" = "$dir" ] || {
    ln -sfn "$dir" "$cache/crds/.snapshot.tmp" && mv -Tf "$cache/crds/.snapshot.tmp" "$cache/crds/snapshot"
  }
}

# The SnapshotMetadataService CRD (cbt.storage.k8s.io v1beta1, changed block tracking) into folder $1
# with the snapshot CRDs, so that whatever installs those installs it too. It comes from the pinned
# k8s.io/kubernetes module (the storage e2e's copy, identical to external-snapshot-metadata's
# client/config/crd at v1.0.0, whose client module the proxy does not serve).
ensure_snapshot_metadata_crd() {
  local name=cbt.storage.k8s.io_snapshotmetadataservices.yaml src
  [ -f "$1/$name" ] && return 0
  src=$(module_dir "$KUBERNETES_MODULE" "$KUBERNETES_VERSION") ||
    fail "snapshot-crds: cannot download $KUBERNETES_MODULE@$KUBERNETES_VERSION"
  src=$src/test/e2e/testing-manifests/storage-csi/external-snapshot-metadata/$name
  [ -f "$src" ] || fail "snapshot-crds: $KUBERNETES_MODULE@$KUBERNETES_VERSION has no $name"
  cp "$src" "$1/$name.tmp"
  chmod u+w "$1/$name.tmp" # the module cache is read-only
  mv "$1/$name.tmp" "$1/$name"
}

# Prints the folder of module $1@$2 in the module cache, downloading it through the proxy.
module_dir() {
  (cd "${TMPDIR:-/tmp}" && GOFLAGS=-mod=mod go mod download -json "$1@$2" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
}

# OLM's own install: its Helm chart (deploy/chart, CRDs included) and the values upstream renders
# its release manifests with (deploy/upstream/values.yaml), from the pinned OLM module;
# hack/local-cluster.sh renders them for the node's images.
ensure_olm_manifests() {
  local dir=$cache/olm/manifests-$OLM_VERSION src
  if [ ! -f "$dir/values.yaml" ]; then
    src=$(module_dir "$OLM_MODULE" "$OLM_VERSION")/deploy
    if [ ! -f "$src/chart/Chart.yaml" ] || [ ! -f "$src/upstream/values.yaml" ]; then
      fail "olm-manifests: no chart/Chart.yaml and upstream/values.yaml in $src"
    fi
    rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
    cp -r "$src/chart" "$dir.tmp/chart"
    cp "$src/upstream/values.yaml" "$dir.tmp/values.yaml"
    chmod -R u+w "$dir.tmp" # the module cache is read-only
    rm -rf "$dir" && mv "$dir.tmp" "$dir"
  fi
  [ "$(readlink "$cache/olm/manifests" 2>/dev/null)" = "$dir" ] || {
    ln -sfn "$dir" "$cache/olm/.manifests.tmp" && mv -Tf "$cache/olm/.manifests.tmp" "$cache/olm/manifests"
  }
}

ensure() {
  case $1 in
  kube-api-test) ensure_kube_api_test ;;
  snapshot-crds) ensure_snapshot_crds ;;
  olm-manifests) ensure_olm_manifests ;;
  *) ensure_tool "$1" ;;
  esac
}

main() {
  [ $# -gt 0 ] || fail "usage: hack/tools.sh NAME... | all | --list"
  if [ "$1" = --list ]; then
    printf '%s\n' "${BUILT_TOOLS[@]}" "${UNSERVED_TOOLS[@]}" "${DERIVED[@]}"
    return
  fi
  mkdir -p "$cache"
  go_version >/dev/null
  local names=() name
  for name in "$@"; do
    if [ "$name" = all ]; then
      names+=("${BUILT_TOOLS[@]}" "${DERIVED[@]}")
      printf 'tools.sh: warning: all skips %s: the Go module proxy refuses their modules (see hack/versions.env)\n' \
        "${UNSERVED_TOOLS[*]}" >&2
    else
      names+=("$name")
    fi
  done
  for name in "${names[@]}"; do
    ensure "$name"
  done
}

# On one line, so that editing this file while it runs cannot change what runs after main.
main "$@"; exit
