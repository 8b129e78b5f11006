package dev.soko.driver.cli;

import dev.soko.driver.config.DriverConfig;
import dev.soko.driver.config.KubeletRegistration;
import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.logging.LogSetup;
import dev.soko.driver.server.Endpoint;
import java.io.PrintWriter;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The command line. It only parses and validates; {@link Launcher} runs the driver. Parsed by hand:
 * a flag library cost ~600 loaded classes and several MiB of resident memory in a process that
 * parses ten flags once (measured), and the driver's idle memory is one of its targets.
 */
public final class DriverCommand {

  /** What runs the driver once the flags are valid; returns the process exit code. */
  @FunctionalInterface
  public interface Launcher {
    int launch(DriverConfig config) throws Exception;
  }

  static final int EXIT_USAGE = 2;

  /** A CSI driver name: at most 63 characters, alphanumeric at both ends, '-', '_', '.' inside. */
  static final Pattern DRIVER_NAME =
      Pattern.compile("[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?");

  /** Node IDs become a topology label value, so they follow the label value syntax. */
  static final Pattern NODE_ID = Pattern.compile("[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?");

  /** Where the kubelet's plugin registry directory is mounted in the driver container. */
  static final String DEFAULT_REGISTRATION_DIR = "/registration";

  private static final String HELP =
      """
      Usage: soko-driver [FLAGS]
      Soko node-local CSI driver (CSI spec v1.12.0).

        --endpoint=unix:///PATH   Unix domain socket to serve CSI on (default:
                                  unix:///csi/csi.sock).
        --node-id=NAME            This node's name (the Kubernetes node name); required in
                                  node mode. Used as the topology value
                                  topology.soko.dev/node.
        --driver-name=NAME        CSI driver name (default: csi.soko.dev).
        --mode=node|controller    node: Identity, Controller and Node over this node's pools.
                                  controller: Identity and ControllerExpandVolume for the
                                  external-resizer, without pools (default: node).
        --pool=SPEC               A storage pool (repeatable; the first is the default):
                                  name=NAME,path=DIR[,capacity=QUANTITY][,overprovision=RATIO]
                                  [,fs=ext4:xfs].
                                    capacity: Kubernetes quantity such as 100Gi or 500M; 0 or
                                    absent = free space of DIR.
                                    overprovision: volume bytes per pool byte, >= 1.0
                                    (default 1.0).
                                    fs: allowed filesystems, the first is the default
                                    (default ext4:xfs).
                                  [,requireMountPoint=true|false]
                                    true: DIR must be the root of a mounted filesystem
                                    (default false).
                                  [,allowRootFilesystem=true|false]
                                    false: refuse DIR when it is on the filesystem of
                                    --kubelet-dir (default false; no check without
                                    --kubelet-dir).
                                  [,backend=image-file|btrfs-subvolume]
                                    image-file: sparse image files on loop devices, ext4
                                    or xfs, block volumes too (default). btrfs-subvolume:
                                    DIR on a btrfs with quotas enabled; a volume is a
                                    subvolume limited by a qgroup, fs is btrfs only, no
                                    block volumes.
                                  [,nodeSelector:KEY=VALUE]...
                                    a node label the pool needs (repeatable, all must
                                    match, as a Pod's nodeSelector); read from this
                                    node's Node object and watched. Without API server
                                    access such a pool is not selected.
                                  A refused or unselected pool is never created or written;
                                  it offers no capacity and CreateVolume on it fails.
        --kubelet-dir=DIR         Node mode: the kubelet's root directory, whose plugins/
                                  subdirectory is mounted from the host; a pool on the same
                                  filesystem (the node's root filesystem) is refused unless
                                  it allows it (default: none, the check is off).
        --allowed-path-root=DIR   Staging and target paths must lie below one of these
                                  directories (repeatable; default: /var/lib/kubelet).
        --max-volumes-per-node=N  Most volumes this node may have attached, reported in
                                  NodeGetInfo; 0 = no limit (default: 0).
        --metrics-address=HOST:PORT
                                  Serve Prometheus metrics at http://HOST:PORT/metrics; empty
                                  disables (default: disabled). Example: 127.0.0.1:9809.
        --health-address=HOST:PORT
                                  Serve the liveness check at http://HOST:PORT/healthz: 200
                                  "ok" when Probe would answer ready, else 500 with the
                                  reason; empty disables (default: disabled). Example:
                                  0.0.0.0:9808. Given the same value as --metrics-address,
                                  one server answers both paths.
        --kubelet-registration-path=PATH
                                  Node mode: register the driver with the kubelet itself, in
                                  place of the node-driver-registrar sidecar. PATH is the CSI
                                  socket as the kubelet sees it on the host, absolute and
                                  clean, e.g. /var/lib/kubelet/plugins/csi.soko.dev/csi.sock
                                  (default: no built-in registration).
        --registration-dir=DIR    With --kubelet-registration-path: the kubelet's plugin
                                  registry as mounted here; the registration socket is
                                  DIR/<driver-name>-reg.sock, made once CSI is served
                                  (default: /registration).
        --label-imported-snapshots=true|false
                                  Node mode: give each pre-provisioned VolumeSnapshotContent
                                  of this driver (spec.source.snapshotHandle, no label
                                  snapshot.storage.kubernetes.io/managed-by) whose snapshot
                                  this node holds that label with the --node-id as value,
                                  so that this node's csi-snapshotter (--node-deployment)
                                  serves it. Needs API server access with list, watch and
                                  patch on volumesnapshotcontents (default: false).
        --log-level=LEVEL         error, warn, info, debug or trace (default: info).
        -h, --help                Show this help message and exit.
        -V, --version             Print version information and exit.

      A flag's value follows '=' or comes as the next argument.
      SIGTERM stops gracefully: the registration socket goes first (the kubelet deregisters),
      in-flight calls finish, then the engine closes (the JVM then exits with 143).
      Exit codes: 1 start-up failure, 2 bad flags.
      """;

  String endpoint = "unix:///csi/csi.sock";
  String nodeId;
  String driverName = "csi.soko.dev";
  String mode = "node";
  List<String> pools = new ArrayList<>();
  List<String> allowedPathRoots = new ArrayList<>();
  String maxVolumesPerNode = "0";
  String metricsAddress = "";
  String healthAddress = "";
  String kubeletRegistrationPath;
  String registrationDir;
  String kubeletDir;
  String labelImportedSnapshots = "false";
  String logLevel = "info";

  private DriverCommand() {}

  /** Parses {@code args} and runs the launcher; returns the process exit code. */
  public static int execute(Launcher launcher, String... args) {
    return execute(
        launcher, new PrintWriter(System.out, true), new PrintWriter(System.err, true), args);
  }

  /** As above, with the output streams given (tests capture them). */
  static int execute(Launcher launcher, PrintWriter out, PrintWriter err, String... args) {
    DriverConfig config;
    try {
      DriverCommand command = new DriverCommand();
      String early = command.parse(args);
      if (early != null) {
        out.print(early);
        out.flush();
        return 0;
      }
      config = command.toConfig();
      LogSetup.setLevel(command.logLevel);
    } catch (UsageException e) {
      err.println("soko-driver: " + e.getMessage());
      err.println("Run 'soko-driver --help' for the flags.");
      err.flush();
      return EXIT_USAGE;
    }
    try {
      return launcher.launch(config);
    } catch (Exception e) {
      err.println("soko-driver: " + e);
      err.flush();
      return 1;
    }
  }

  /** Fills the fields from {@code args}; returns help or version text when asked for, else null. */
  private String parse(String[] args) {
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      switch (arg) {
        case "-h", "--help" -> {
          return HELP;
        }
        case "-V", "--version" -> {
          return "soko-driver " + Version.current() + " (CSI spec v1.12.0)\n";
        }
        default -> {}
      }
      int eq = arg.indexOf('=');
      String name = eq > 0 ? arg.substring(0, eq) : arg;
      String value;
      if (eq > 0) {
        value = arg.substring(eq + 1);
      } else if (i + 1 < args.length && isFlag(name)) {
        value = args[++i];
      } else {
        throw isFlag(name)
            ? usage("missing value for %s", name)
            : usage("unknown flag or argument '%s'", arg);
      }
      set(name, value, arg);
    }
    return null;
  }

  private static boolean isFlag(String name) {
    return switch (name) {
      case "--endpoint",
              "--node-id",
              "--driver-name",
              "--mode",
              "--pool",
              "--allowed-path-root",
              "--max-volumes-per-node",
              "--metrics-address",
              "--health-address",
              "--kubelet-registration-path",
              "--registration-dir",
              "--kubelet-dir",
              "--label-imported-snapshots",
              "--log-level" ->
          true;
      default -> false;
    };
  }

  private void set(String name, String value, String arg) {
    switch (name) {
      case "--endpoint" -> endpoint = value;
      case "--node-id" -> nodeId = value;
      case "--driver-name" -> driverName = value;
      case "--mode" -> mode = value;
      case "--pool" -> pools.add(value);
      case "--allowed-path-root" -> allowedPathRoots.add(value);
      case "--max-volumes-per-node" -> maxVolumesPerNode = value;
      case "--metrics-address" -> metricsAddress = value;
      case "--health-address" -> healthAddress = value;
      case "--kubelet-registration-path" -> kubeletRegistrationPath = value;
      case "--registration-dir" -> registrationDir = value;
      case "--kubelet-dir" -> kubeletDir = value;
      case "--label-imported-snapshots" -> labelImportedSnapshots = value;
      case "--log-level" -> logLevel = value;
      default -> throw usage("unknown flag or argument '%s'", arg);
    }
  }

  /** Validates every flag and builds the configuration; a bad flag throws a usage error. */
  DriverConfig toConfig() {
    DriverConfig.Mode parsedMode = parseMode();
    check(
        DRIVER_NAME.matcher(driverName).matches(),
        "--driver-name '%s' is not a valid CSI driver name (at most 63 characters: letters, digits, '-', '_', '.', alphanumeric at both ends)",
        driverName);
    try {
      Endpoint.parse(endpoint);
    } catch (IllegalArgumentException e) {
      throw usage("--endpoint: %s", e.getMessage());
    }
    check(
        LogSetup.LEVELS.contains(logLevel.toLowerCase(Locale.ROOT)),
        "--log-level must be one of %s, got '%s'",
        LogSetup.LEVELS,
        logLevel);
    int maxVolumes;
    try {
      maxVolumes = Integer.parseInt(maxVolumesPerNode);
    } catch (NumberFormatException e) {
      throw usage("--max-volumes-per-node must be a whole number, got '%s'", maxVolumesPerNode);
    }
    check(maxVolumes >= 0, "--max-volumes-per-node must not be negative");
    checkAddress("--metrics-address", metricsAddress);
    checkAddress("--health-address", healthAddress);
    Optional<KubeletRegistration> registration = parseRegistration(parsedMode);
    List<PoolConfig> poolConfigs = parsePools(parsedMode);
    Optional<Path> kubelet = Optional.empty();
    if (kubeletDir != null) {
      check(parsedMode == DriverConfig.Mode.NODE, "--kubelet-dir is only for node mode");
      kubelet = Optional.of(cleanAbsolute("--kubelet-dir", kubeletDir));
    }
    boolean labelImports = parseBoolean("--label-imported-snapshots", labelImportedSnapshots);
    check(
        !labelImports || parsedMode == DriverConfig.Mode.NODE,
        "--label-imported-snapshots is only for node mode (the node that holds a snapshot labels"
            + " it)");
    String node = nodeId == null ? "" : nodeId;
    if (parsedMode == DriverConfig.Mode.NODE || !node.isEmpty()) {
      check(!node.isEmpty(), "--node-id is required in node mode");
      check(
          NODE_ID.matcher(node).matches(),
          "--node-id '%s' must be at most 63 characters: letters, digits, '-', '_', '.', alphanumeric at both ends (it is a label value)",
          node);
    }
    List<Path> roots = new ArrayList<>();
    for (String root :
        allowedPathRoots.isEmpty() ? List.of("/var/lib/kubelet") : allowedPathRoots) {
      try {
        roots.add(Path.of(root));
      } catch (InvalidPathException e) {
        throw usage("--allowed-path-root '%s' is not a valid path", root);
      }
    }
    for (Path root : roots) {
      check(
          root.isAbsolute() && !root.equals(root.getRoot()),
          "--allowed-path-root '%s' must be an absolute directory other than /",
          root);
    }
    return new DriverConfig(
        driverName,
        node,
        parsedMode,
        endpoint,
        poolConfigs,
        roots.stream().map(Path::normalize).toList(),
        maxVolumes,
        metricsAddress,
        healthAddress,
        registration,
        kubelet,
        labelImports);
  }

  private static boolean parseBoolean(String flag, String value) {
    return switch (value) {
      case "true" -> true;
      case "false" -> false;
      default -> throw usage("%s must be true or false, got '%s'", flag, value);
    };
  }

  private static void checkAddress(String flag, String address) {
    if (!address.isEmpty()) {
      try {
        HostPort.parse(address);
      } catch (IllegalArgumentException e) {
        throw usage("%s: %s", flag, e.getMessage());
      }
    }
  }

  /** Built-in registration is on when {@code --kubelet-registration-path} is given. */
  private Optional<KubeletRegistration> parseRegistration(DriverConfig.Mode parsedMode) {
    if (kubeletRegistrationPath == null) {
      check(registrationDir == null, "--registration-dir needs --kubelet-registration-path");
      return Optional.empty();
    }
    check(
        parsedMode == DriverConfig.Mode.NODE,
        "--kubelet-registration-path is only for node mode (the kubelet registers node plugins)");
    Path kubeletEndpoint = cleanAbsolute("--kubelet-registration-path", kubeletRegistrationPath);
    Path dir =
        cleanAbsolute(
            "--registration-dir",
            registrationDir == null ? DEFAULT_REGISTRATION_DIR : registrationDir);
    // node-driver-registrar's name for it; the kubelet accepts any socket in its registry.
    Path socket = dir.resolve(driverName + "-reg.sock");
    check(
        Endpoint.fitsSocketAddress(kubeletEndpoint),
        "--kubelet-registration-path is longer than a socket path may be (107 bytes)");
    check(
        Endpoint.fitsSocketAddress(socket),
        "the registration socket %s is longer than a socket path may be (107 bytes)",
        socket);
    check(
        !socket.equals(Endpoint.parse(endpoint).socket()),
        "the registration socket %s is the --endpoint socket",
        socket);
    return Optional.of(new KubeletRegistration(kubeletEndpoint, socket));
  }

  /**
   * The kubelet uses these paths as written, so they must already be in their one canonical form:
   * absolute, not '/', without '.', '..', '//' or a trailing '/'.
   */
  private static Path cleanAbsolute(String flag, String value) {
    Path path;
    try {
      path = Path.of(value);
    } catch (InvalidPathException e) {
      throw usage("%s '%s' is not a valid path", flag, value);
    }
    check(
        path.isAbsolute() && path.getNameCount() > 0 && path.normalize().toString().equals(value),
        "%s '%s' must be an absolute, clean path other than / (no '.', '..', '//' or trailing '/')",
        flag,
        value);
    return path;
  }

  private DriverConfig.Mode parseMode() {
    return switch (mode.toLowerCase(Locale.ROOT)) {
      case "node" -> DriverConfig.Mode.NODE;
      case "controller" -> DriverConfig.Mode.CONTROLLER;
      default -> throw usage("--mode must be node or controller, got '%s'", mode);
    };
  }

  private List<PoolConfig> parsePools(DriverConfig.Mode parsedMode) {
    if (parsedMode == DriverConfig.Mode.CONTROLLER) {
      check(pools.isEmpty(), "--pool is not allowed in controller mode (pools live on nodes)");
      return List.of();
    }
    check(!pools.isEmpty(), "at least one --pool is required in node mode");
    List<PoolConfig> parsed = new ArrayList<>();
    Set<String> names = new HashSet<>();
    for (String pool : pools) {
      PoolConfig config;
      try {
        config = PoolSpec.parse(pool);
      } catch (IllegalArgumentException e) {
        throw usage("--pool '%s': %s", pool, e.getMessage());
      }
      check(names.add(config.name()), "--pool name '%s' is used twice", config.name());
      parsed.add(config);
    }
    return List.copyOf(parsed);
  }

  private static void check(boolean condition, String format, Object... args) {
    if (!condition) {
      throw usage(format, args);
    }
  }

  private static UsageException usage(String format, Object... args) {
    return new UsageException(String.format(format, args));
  }

  /** A bad flag: reported in one line with exit code 2, never with a stack trace. */
  static final class UsageException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    UsageException(String message) {
      super(message);
    }
  }
}
