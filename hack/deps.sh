#!/usr/bin/env bash
# Installs the Debian packages Soko's build and tests need. Idempotent: installs only what is missing.
set -euo pipefail

# e2fsprogs: mkfs.ext4/resize2fs; xfsprogs: mkfs.xfs/xfs_growfs; util-linux: losetup/mount/blkid/
# fsfreeze; coreutils: cp --reflink/--sparse; btrfs-progs: btrfs subvolume/qgroup for the
# btrfs-subvolume pool backend, mkfs.btrfs for its tests. The driver's integration tests need all.
packages=(e2fsprogs xfsprogs util-linux coreutils btrfs-progs)

# Container images (hack/images.sh, hack/test-images.sh): root filesystems from Debian packages,
# daemonless image build/run (runc: crun fails on this host's hybrid cgroups).
packages+=(mmdebstrap podman buildah runc uidmap fuse-overlayfs slirp4netns containernetworking-plugins)

# The local cluster (hack/local-cluster.sh): certificates for its kube-apiserver and kubelets.
packages+=(openssl)

# The local cluster (hack/local-cluster.sh): runc as containerd's OCI runtime, the CNI plugins
# (bridge, host-local, portmap, loopback), iptables for kube-proxy, socat to reach the cluster's
# API server from the host's loopback, busybox-static for the test workloads' image.
packages+=(runc containernetworking-plugins iptables socat busybox-static)

# The local cluster's nodes serve SSH (hack/local-cluster.sh), as Kubernetes' e2e suite expects of a
# node; the suite's [Disruptive] specs restart a node's kubelet through it.
packages+=(openssh-server openssh-client)

# The data-path benchmark (hack/bench-data.sh): fio (and btrfs-progs, above, for its btrfs pool).
packages+=(fio)

# Chart and OLM bundle generator and tests (hack/gen-dist.py, hack/test-dist.py).
packages+=(python3 python3-yaml)

# Lint of the scripts under hack/ (hack/lint-shell.sh, part of `make test`).
packages+=(shellcheck)

# Monitoring (operator AlertRulesTest, PrometheusMonitoringIT): promtool checks and unit-tests the
# shipped alert rules; a real Prometheus scrapes a real driver and operator on loopback.
packages+=(prometheus)

missing=()
for pkg in "${packages[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if ((${#missing[@]})); then
  # No package may start a service on this machine (openssh-server would start an sshd listening on
  # every address, prometheus a server): invoke-rc.d asks /usr/sbin/policy-rc.d, and 101 refuses.
  policy_made=
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d
    policy_made=1
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
  [ -z "$policy_made" ] || { rm -f /usr/sbin/policy-rc.d && trap - EXIT; }
fi
