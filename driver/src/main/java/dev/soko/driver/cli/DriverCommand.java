package dev.soko.driver.cli;

import dev.soko.driver.config.DriverConfig;
import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.logging.LogSetup;
import dev.soko.driver.server.Endpoint;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** The command line. It only parses and validates; {@link Launcher} runs the driver. */
@Command(
    name = "soko-driver",
    mixinStandardHelpOptions = true,
    versionProvider = Version.class,
    sortOptions = false,
    usageHelpAutoWidth = true,
    description = "Soko node-local CSI driver (CSI spec v1.12.0).",
    footer = {
      "",
      "SIGTERM stops gracefully: in-flight calls finish, then the engine closes (the JVM then"
          + " exits with 143). Exit codes: 1 start-up failure, 2 bad flags."
    })
public final class DriverCommand implements Callable<Integer> {

  /** What runs the driver once the flags are valid; returns the process exit code. */
  @FunctionalInterface
  public interface Launcher {
    int launch(DriverConfig config) throws Exception;
  }

  /** A CSI driver name: at most 63 characters, alphanumeric at both ends, '-', '_', '.' inside. */
  static final Pattern DRIVER_NAME =
      Pattern.compile("[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?");

  /** Node IDs become a topology label value, so they follow the label value syntax. */
  static final Pattern NODE_ID = Pattern.compile("[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?");

  @Spec CommandSpec spec;

  @Option(
      names = "--endpoint",
      paramLabel = "unix:///PATH",
      description = "Unix domain socket to serve CSI on (default: ${DEFAULT-VALUE}).",
      defaultValue = "unix:///csi/csi.sock")
  String endpoint;

  @Option(
      names = "--node-id",
      paramLabel = "NAME",
      description =
          "This node's name (the Kubernetes node name); required in node mode. Used as the"
              + " topology value topology.soko.dev/node.")
  String nodeId;

  @Option(
      names = "--driver-name",
      paramLabel = "NAME",
      description = "CSI driver name (default: ${DEFAULT-VALUE}).",
      defaultValue = "csi.soko.dev")
  String driverName;

  @Option(
      names = "--mode",
      paramLabel = "node|controller",
      description =
          "node: Identity, Controller and Node over this node's pools. controller: Identity and"
              + " ControllerExpandVolume for the external-resizer, without pools (default:"
              + " ${DEFAULT-VALUE}).",
      defaultValue = "node")
  String mode;

  @Option(
      names = "--pool",
      paramLabel = "SPEC",
      description = {
        "A storage pool (repeatable; the first is the default):"
            + " name=NAME,path=DIR[,capacity=QUANTITY][,overprovision=RATIO][,fs=ext4:xfs].",
        "  capacity: Kubernetes quantity such as 100Gi or 500M; 0 or absent = free space of DIR.",
        "  overprovision: volume bytes per pool byte, >= 1.0 (default 1.0).",
        "  fs: allowed filesystems, the first is the default (default ext4:xfs)."
      })
  List<String> pools = new ArrayList<>();

  @Option(
      names = "--allowed-path-root",
      paramLabel = "DIR",
      description =
          "Staging and target paths must lie below one of these directories (repeatable;"
              + " default: /var/lib/kubelet).")
  List<Path> allowedPathRoots = new ArrayList<>();

  @Option(
      names = "--max-volumes-per-node",
      paramLabel = "N",
      description =
          "Most volumes this node may have attached, reported in NodeGetInfo; 0 = no limit"
              + " (default: ${DEFAULT-VALUE}).",
      defaultValue = "0")
  int maxVolumesPerNode;

  @Option(
      names = "--metrics-address",
      paramLabel = "HOST:PORT",
      description =
          "Serve Prometheus metrics at http://HOST:PORT/metrics; empty disables (default:"
              + " disabled). Example: 127.0.0.1:9809.",
      defaultValue = "")
  String metricsAddress;

  @Option(
      names = "--log-level",
      paramLabel = "LEVEL",
      description = "error, warn, info, debug or trace (default: ${DEFAULT-VALUE}).",
      defaultValue = "info")
  String logLevel;

  private final Launcher launcher;

  public DriverCommand(Launcher launcher) {
    this.launcher = launcher;
  }

  /** Parses {@code args} and runs the launcher; returns the process exit code. */
  public static int execute(Launcher launcher, String... args) {
    return execute(new CommandLine(new DriverCommand(launcher)), args);
  }

  /** As above, on a prepared command line (tests set its output writers). */
  static int execute(CommandLine commandLine, String... args) {
    commandLine.setParameterExceptionHandler(DriverCommand::badFlags);
    return commandLine.execute(args);
  }

  private static int badFlags(ParameterException e, String[] args) {
    PrintWriter err = e.getCommandLine().getErr();
    err.println("soko-driver: " + e.getMessage());
    err.println("Run 'soko-driver --help' for the flags.");
    err.flush();
    return CommandLine.ExitCode.USAGE;
  }

  @Override
  public Integer call() throws Exception {
    DriverConfig config = toConfig();
    LogSetup.setLevel(logLevel);
    return launcher.launch(config);
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
    check(maxVolumesPerNode >= 0, "--max-volumes-per-node must not be negative");
    if (!metricsAddress.isEmpty()) {
      try {
        HostPort.parse(metricsAddress);
      } catch (IllegalArgumentException e) {
        throw usage("--metrics-address: %s", e.getMessage());
      }
    }
    List<PoolConfig> poolConfigs = parsePools(parsedMode);
    String node = nodeId == null ? "" : nodeId;
    if (parsedMode == DriverConfig.Mode.NODE || !node.isEmpty()) {
      check(!node.isEmpty(), "--node-id is required in node mode");
      check(
          NODE_ID.matcher(node).matches(),
          "--node-id '%s' must be at most 63 characters: letters, digits, '-', '_', '.', alphanumeric at both ends (it is a label value)",
          node);
    }
    List<Path> roots =
        allowedPathRoots.isEmpty()
            ? List.of(Path.of("/var/lib/kubelet"))
            : List.copyOf(allowedPathRoots);
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
        maxVolumesPerNode,
        metricsAddress);
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

  private void check(boolean condition, String format, Object... args) {
    if (!condition) {
      throw usage(format, args);
    }
  }

  private ParameterException usage(String format, Object... args) {
    return new ParameterException(spec.commandLine(), String.format(format, args));
  }
}
