#!/usr/bin/env bash
# Installs the Debian packages the project's builds and tests need. Idempotent; run as root.
set -euo pipefail

need() {
  local pkg
  for pkg in "$@"; do
    dpkg -s "$pkg" >/dev/null 2>&1 && continue
    if [[ -z "${APT_UPDATED:-}" ]]; then apt-get update -qq; APT_UPDATED=1; fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg"
  done
}

# Container images (hack/images.sh, hack/test-images.sh): root filesystems from Debian packages,
# daemonless image build/run (runc: crun fails on this host's hybrid cgroups).
need mmdebstrap podman buildah runc uidmap fuse-overlayfs slirp4netns containernetworking-plugins

# Chart and OLM bundle generator and tests (hack/gen-dist.py, hack/test-dist.py).
need python3 python3-yaml
