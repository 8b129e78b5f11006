package dev.soko.driver.cli;

import dev.soko.driver.config.DriverConfig;
import java.util.Optional;

/**
 * The driver's flags, each said once: the parser, {@code --help} and the docs' flag table ({@link
 * FlagReference}) all read this table, and the operator's tests parse what it renders against it,
 * so a flag renamed here fails the build wherever it is still written the old way.
 */
enum Flag {
  ENDPOINT(
      "--endpoint",
      "unix:///PATH",
      "unix:///csi/csi.sock",
      Use.ONCE,
      "The Unix domain socket to serve CSI on, the one the kubelet and the sidecars talk to."),
  NODE_ID(
      "--node-id",
      "NAME",
      null,
      Use.ONCE,
      "This node's name (the Kubernetes node name), required in node mode. It is the topology"
          + " value topology.soko.dev/node, so at most 63 characters: letters, digits, '-', '_',"
          + " '.', alphanumeric at both ends."),
  DRIVER_NAME("--driver-name", "NAME", "csi.soko.dev", Use.ONCE, "The CSI driver name."),
  MODE(
      "--mode",
      "node|controller",
      "node",
      Use.ONCE,
      "node: Identity, Controller and Node over this node's pools (distributed provisioning)."
          + " controller: Identity and ControllerExpandVolume for the external-resizer, without"
          + " pools."),
  POOL(
      "--pool",
      "SPEC",
      null,
      Use.REPEATED_NODE_ONLY,
      "A storage pool, SPEC made of the pool fields below (at least one in node mode; the first"
          + " is the default). A refused or unselected pool is never created or written; it offers no"
          + " capacity, CreateVolume on it fails, and volumes made there before keep working."
          + " Refused pools are checked again every 10 s."),
  KUBELET_DIR(
      "--kubelet-dir",
      "DIR",
      null,
      Use.NODE_ONLY,
      "The kubelet's root directory, whose plugins/ subdirectory is mounted from the host: a pool"
          + " on the same filesystem (the node's root filesystem) is refused unless it sets"
          + " allowRootFilesystem. Absent, the check is off (the driver run by hand,"
          + " csi-sanity); the operator always passes it."),
  ALLOWED_PATH_ROOT(
      "--allowed-path-root",
      "DIR",
      "/var/lib/kubelet",
      Use.REPEATED,
      "Staging and target paths must lie below one of these directories."),
  MAX_VOLUMES_PER_NODE(
      "--max-volumes-per-node",
      "N",
      "0",
      Use.ONCE,
      "The most volumes this node may have attached, reported in NodeGetInfo; 0: no limit."),
  METRICS_ADDRESS(
      "--metrics-address",
      "HOST:PORT",
      "",
      Use.ONCE,
      "Serve Prometheus metrics at http://HOST:PORT/metrics; empty or absent: off. Example:"
          + " 0.0.0.0:9809."),
  HEALTH_ADDRESS(
      "--health-address",
      "HOST:PORT",
      "",
      Use.ONCE,
      "Serve the liveness check at http://HOST:PORT/healthz: 200 \"ok\" when Probe would answer"
          + " ready, else 500 with the reason (the pools that are not usable yet); and the"
          + " readiness check at /readyz: the same, and, with --registration-dir, only once the"
          + " kubelet has registered the driver. Empty or absent: off. Given the address of"
          + " --metrics-address, one server answers every path. Replaces the livenessprobe"
          + " sidecar."),
  KUBELET_REGISTRATION_PATH(
      "--kubelet-registration-path",
      "PATH",
      null,
      Use.NODE_ONLY,
      "Register the driver with the kubelet itself, in place of the node-driver-registrar"
          + " sidecar. PATH is the CSI socket as the kubelet sees it on the host, absolute and"
          + " clean, e.g. /var/lib/kubelet/plugins/csi.soko.dev/csi.sock. Absent: no built-in"
          + " registration."),
  REGISTRATION_DIR(
      "--registration-dir",
      "DIR",
      "/registration",
      Use.NODE_ONLY,
      "With --kubelet-registration-path: the kubelet's plugin registry"
          + " (/var/lib/kubelet/plugins_registry) as mounted here. The registration socket"
          + " DIR/<driver-name>-reg.sock is made once CSI is served, a stale one is replaced, and"
          + " at SIGTERM it goes first, so the kubelet deregisters the driver before the CSI"
          + " server stops."),
  NRI_SOCKET(
      "--nri-socket",
      "PATH",
      "/var/run/nri/nri.sock",
      Use.NODE_ONLY,
      "The container runtime's NRI socket (containerd 2.x: on by default at this path). The driver"
          + " connects as an NRI plugin and, when the runtime starts a container of a pod with"
          + " IO-limited volumes, writes their limits into the container's cgroup before the"
          + " container runs. Absent socket or runtime without NRI: the driver tries again every"
          + " 5 s, and meanwhile a container starts unlimited until the next periodic pass (every"
          + " 2 s). Empty: off."),
  DATA_ADDRESS(
      "--data-address",
      "HOST:PORT",
      "",
      Use.NODE_ONLY,
      "Serve the node-to-node data port (gRPC soko.data.v1: other nodes and the controller read"
          + " this node's snapshots) at HOST:PORT, with mutual TLS from --data-tls-dir, which it"
          + " needs. HOST is also the address this node advertises in its StorageNode"
          + " (dataEndpoint), so it must be one the other nodes reach, e.g. the pod's IP. Empty or"
          + " absent: no data port."),
  DATA_TLS_DIR(
      "--data-tls-dir",
      "DIR",
      null,
      Use.ONCE,
      "The data port's credentials: DIR holds tls.crt and tls.key (PEM, this component's"
          + " certificate, whose subject CN is its role, soko-node or soko-controller, and its"
          + " PKCS#8 key) and ca.crt (PEM, the CA certificates peers are verified against). Used"
          + " by the data port and by this driver's calls to other nodes' ports; re-read every"
          + " minute, so a renewed certificate needs no restart. Absent: no data port, and no"
          + " calls to other nodes."),
  DATA_MAX_READS(
      "--data-max-reads",
      "N",
      String.valueOf(DriverConfig.DEFAULT_DATA_MAX_READS),
      Use.NODE_ONLY,
      "The most streams the data port serves at once (a snapshot's or volume's data read by"
          + " another node, block metadata read by the controller), at least 1. One more is"
          + " refused at once with RESOURCE_EXHAUSTED, which the reading node answers its"
          + " CreateVolume with as UNAVAILABLE, so the provisioner tries again later: a node's"
          + " disk and network are shared by every copy it serves, and its own volumes'"
          + " workloads."),
  LABEL_IMPORTED_SNAPSHOTS(
      "--label-imported-snapshots",
      "true|false",
      "false",
      Use.ONCE,
      "Node mode: give each pre-provisioned VolumeSnapshotContent of this driver"
          + " (spec.source.snapshotHandle, no label snapshot.storage.kubernetes.io/managed-by)"
          + " whose snapshot this node holds that label with the --node-id as value, so that this"
          + " node's csi-snapshotter (--node-deployment) serves it. Needs API server access with"
          + " list, watch and patch on volumesnapshotcontents. true is refused in controller"
          + " mode."),
  IMMEDIATE_GROWTH(
      "--immediate-growth",
      "true|false",
      "true",
      Use.ONCE,
      "Controller mode: hand ControllerExpandVolume of a volume to its node (a NodeRequest), which"
          + " grows the storage, the device and the filesystem at once and answers"
          + " node_expansion_required=false, so pods see the new size in seconds; where the node"
          + " cannot finish, the kubelet's path as with false. Needs API server access. false:"
          + " answer node_expansion_required=true and leave the growth to NodeExpandVolume, which"
          + " the kubelet calls when it next syncs a pod that uses the volume (about a minute)."
          + " false is refused in node mode."),
  LOG_LEVEL(
      "--log-level",
      "LEVEL",
      "info",
      Use.ONCE,
      "One of " + String.join(", ", DriverConfig.LOG_LEVELS) + "."),
  HELP("--help", null, null, Use.ONCE, "Show this help message and exit (also -h)."),
  VERSION("--version", null, null, Use.ONCE, "Print version information and exit (also -V).");

  /** How often a flag may be given, and in which mode. */
  enum Use {
    ONCE,
    REPEATED,
    NODE_ONLY,
    REPEATED_NODE_ONLY;

    boolean repeated() {
      return this == REPEATED || this == REPEATED_NODE_ONLY;
    }

    boolean nodeOnly() {
      return this == NODE_ONLY || this == REPEATED_NODE_ONLY;
    }
  }

  final String name;

  /** The value's syntax; null for a flag that takes none ({@link #HELP}, {@link #VERSION}). */
  final String value;

  /** What the driver uses when the flag is absent; null: nothing. */
  final String defaultValue;

  final Use use;
  final String help;

  Flag(String name, String value, String defaultValue, Use use, String help) {
    this.name = name;
    this.value = value;
    this.defaultValue = defaultValue;
    this.use = use;
    this.help = help;
  }

  /** The flag a command-line word names ({@code -h} and {@code -V} included). */
  static Optional<Flag> named(String word) {
    switch (word) {
      case "-h" -> {
        return Optional.of(HELP);
      }
      case "-V" -> {
        return Optional.of(VERSION);
      }
      default -> {
        for (Flag flag : values()) {
          if (flag.name.equals(word)) {
            return Optional.of(flag);
          }
        }
        return Optional.empty();
      }
    }
  }

  /** How the flag is written with its value, {@code --endpoint=unix:///PATH}. */
  String synopsis() {
    return value == null ? name : name + "=" + value;
  }

  /** The help text with what the flag's use and default add to it. */
  String description() {
    StringBuilder text = new StringBuilder(help);
    if (use.nodeOnly()) {
      text.append(" Node mode only.");
    }
    if (use.repeated()) {
      text.append(" Repeatable.");
    }
    if (defaultValue != null && !defaultValue.isEmpty()) {
      text.append(" Default: ").append(defaultValue).append('.');
    }
    return text.toString();
  }
}
