#!/usr/bin/env bash
# `systemctl` on a node of the local cluster (hack/local-cluster.sh): what Kubernetes' e2e suite
# sends over SSH to stop, start and restart a node's kubelet, and to ask whether it runs. The
# node's sshd puts this first on the PATH of its sessions. The kubelet is a process the cluster
# script started on the host, so each request goes over the node's unit socket
# ($SOKO_NODE_UNITS, a Unix socket the cluster script serves on the host) and the cluster script
# carries it out there; the answer's last line is the exit status.
#
# Served, as systemd answers them:
#   systemctl stop|start|restart kubelet
#   systemctl show kubelet --property ActiveState --value     active | inactive
#   systemctl is-active kubelet                               the same, exit 0 only when active
#   systemctl --version
set -euo pipefail

refuse() {
  echo "systemctl on a Soko local node serves: stop|start|restart|is-active kubelet, show kubelet" \
    "--property ActiveState --value, --version; not '$*'" >&2
  exit 1
}

case "$*" in
--version)
  echo "systemd 0 (the kubelet's unit on a Soko local node)"
  exit 0
  ;;
"stop kubelet" | "start kubelet" | "restart kubelet") request=${1} ;;
"show kubelet --property ActiveState --value" | "show kubelet --property=ActiveState --value" | \
  "is-active kubelet") request=state ;;
*) refuse "$@" ;;
esac

[ -S "${SOKO_NODE_UNITS:-}" ] || {
  echo "systemctl: no unit socket (SOKO_NODE_UNITS='${SOKO_NODE_UNITS:-}')" >&2
  exit 1
}
status=1 answer=
while IFS= read -r line; do
  case $line in
  status=*) status=${line#status=} ;;
  *) answer+=$line$'\n' ;;
  esac
done < <(echo "$request" | socat -t 120 - "UNIX-CONNECT:$SOKO_NODE_UNITS")
printf '%s' "$answer"
# systemd's is-active: 0 when active, 3 when not.
if [ "$1" = is-active ] && [ "$status" = 0 ] && [ "$answer" != $'active\n' ]; then exit 3; fi
exit "$status"
