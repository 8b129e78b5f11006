package dev.soko.driver.cli;

import dev.soko.driver.config.DriverConfig;
import dev.soko.driver.config.Endpoint;
import dev.soko.driver.config.KubeletRegistration;
import dev.soko.driver.config.PoolConfig;
import java.io.PrintWriter;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The command line. It only parses and validates; {@link Launcher} runs the driver. The flags are
 * the rows of {@link Flag}, a pool's fields those of {@link PoolField}. Parsed by hand: a flag
 * library cost ~600 loaded classes and several MiB of resident memory in a process that parses ten
 * flags once (measured), and the driver's idle memory is one of its targets.
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

  /** The flags given, in order, each with its values. */
  private final Map<Flag, List<String>> given = new EnumMap<>(Flag.class);

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
      Optional<String> early = command.parse(args);
      if (early.isPresent()) {
        out.print(early.get());
        out.flush();
        return 0;
      }
      config = command.toConfig();
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

  /**
   * The configuration {@code args} mean, exactly as the driver would start with it.
   *
   * @throws UsageException for what the driver refuses, with the message it prints; also for {@code
   *     --help} and {@code --version}, which start nothing
   */
  public static DriverConfig configOf(List<String> args) {
    DriverCommand command = new DriverCommand();
    if (command.parse(args.toArray(String[]::new)).isPresent()) {
      throw usage("--help and --version start no driver");
    }
    return command.toConfig();
  }

  /** Records every flag of {@code args}; returns help or version text when asked for. */
  private Optional<String> parse(String[] args) {
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      int eq = arg.indexOf('=');
      String word = eq > 0 ? arg.substring(0, eq) : arg;
      Optional<Flag> named = Flag.named(word);
      if (named.isEmpty()) {
        throw usage("unknown flag or argument '%s'", arg);
      }
      Flag flag = named.get();
      if (flag == Flag.HELP) {
        return Optional.of(Help.text());
      }
      if (flag == Flag.VERSION) {
        return Optional.of("soko-driver " + Version.current() + " (CSI spec v1.12.0)\n");
      }
      String value;
      if (eq > 0) {
        value = arg.substring(eq + 1);
      } else if (i + 1 < args.length) {
        value = args[++i];
      } else {
        throw usage("missing value for %s", word);
      }
      List<String> values = given.computeIfAbsent(flag, f -> new ArrayList<>());
      if (!flag.use.repeated()) {
        values.clear(); // the last one counts
      }
      values.add(value);
    }
    return Optional.empty();
  }

  /** The flag's value: the last one given, else its default (null when it has none). */
  private String value(Flag flag) {
    List<String> values = given.get(flag);
    return values == null ? flag.defaultValue : values.get(values.size() - 1);
  }

  private List<String> values(Flag flag) {
    return given.getOrDefault(flag, List.of());
  }

  /** Validates every flag and builds the configuration; a bad flag throws a usage error. */
  DriverConfig toConfig() {
    DriverConfig.Mode mode = parseMode();
    if (mode == DriverConfig.Mode.CONTROLLER) {
      for (Flag flag : given.keySet()) {
        check(!flag.use.nodeOnly(), "%s is only for node mode", flag.name);
      }
    }
    String driverName = value(Flag.DRIVER_NAME);
    check(
        DRIVER_NAME.matcher(driverName).matches(),
        "--driver-name '%s' is not a valid CSI driver name (at most 63 characters: letters, digits, '-', '_', '.', alphanumeric at both ends)",
        driverName);
    String endpoint = value(Flag.ENDPOINT);
    try {
      Endpoint.parse(endpoint);
    } catch (IllegalArgumentException e) {
      throw usage("--endpoint: %s", e.getMessage());
    }
    String logLevel = value(Flag.LOG_LEVEL);
    check(
        DriverConfig.LOG_LEVELS.contains(logLevel.toLowerCase(Locale.ROOT)),
        "--log-level must be one of %s, got '%s'",
        DriverConfig.LOG_LEVELS,
        logLevel);
    int maxVolumes;
    try {
      maxVolumes = Integer.parseInt(value(Flag.MAX_VOLUMES_PER_NODE));
    } catch (NumberFormatException e) {
      throw usage(
          "--max-volumes-per-node must be a whole number, got '%s'",
          value(Flag.MAX_VOLUMES_PER_NODE));
    }
    check(maxVolumes >= 0, "--max-volumes-per-node must not be negative");
    String metricsAddress = checkAddress(Flag.METRICS_ADDRESS);
    String healthAddress = checkAddress(Flag.HEALTH_ADDRESS);
    Optional<KubeletRegistration> registration = parseRegistration(driverName, endpoint);
    List<PoolConfig> pools = parsePools(mode);
    Optional<Path> kubeletDir =
        Optional.ofNullable(value(Flag.KUBELET_DIR))
            .map(dir -> cleanAbsolute(Flag.KUBELET_DIR, dir));
    boolean labelImports = parseBoolean(Flag.LABEL_IMPORTED_SNAPSHOTS);
    check(
        !labelImports || mode == DriverConfig.Mode.NODE,
        "--label-imported-snapshots is only for node mode (the node that holds a snapshot labels"
            + " it)");
    boolean immediateGrowth = parseBoolean(Flag.IMMEDIATE_GROWTH);
    check(
        immediateGrowth || mode == DriverConfig.Mode.CONTROLLER,
        "--immediate-growth is only for controller mode (the controller chooses the path of a"
            + " growth)");
    String dataAddress = checkAddress(Flag.DATA_ADDRESS);
    Optional<Path> dataTlsDir =
        Optional.ofNullable(value(Flag.DATA_TLS_DIR))
            .map(dir -> cleanAbsolute(Flag.DATA_TLS_DIR, dir));
    check(
        dataAddress.isEmpty() || dataTlsDir.isPresent(),
        "--data-address needs --data-tls-dir: the data port serves mutual TLS only");
    int dataMaxReads = parsePositive(Flag.DATA_MAX_READS);
    String node = value(Flag.NODE_ID) == null ? "" : value(Flag.NODE_ID);
    if (mode == DriverConfig.Mode.NODE || !node.isEmpty()) {
      check(!node.isEmpty(), "--node-id is required in node mode");
      check(
          NODE_ID.matcher(node).matches(),
          "--node-id '%s' must be at most 63 characters: letters, digits, '-', '_', '.', alphanumeric at both ends (it is a label value)",
          node);
    }
    return new DriverConfig(
        driverName,
        node,
        mode,
        endpoint,
        pools,
        allowedPathRoots(),
        maxVolumes,
        metricsAddress,
        healthAddress,
        registration,
        kubeletDir,
        logLevel,
        labelImports,
        dataAddress,
        dataTlsDir,
        dataMaxReads,
        immediateGrowth,
        nriSocket(mode));
  }

  /** The runtime's NRI socket in node mode, unless given empty. */
  private Optional<Path> nriSocket(DriverConfig.Mode mode) {
    String path = value(Flag.NRI_SOCKET);
    if (mode != DriverConfig.Mode.NODE || path.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(cleanAbsolute(Flag.NRI_SOCKET, path));
  }

  private int parsePositive(Flag flag) {
    int value;
    try {
      value = Integer.parseInt(value(flag));
    } catch (NumberFormatException e) {
      throw usage("%s must be a whole number, got '%s'", flag.name, value(flag));
    }
    check(value >= 1, "%s must be at least 1, got %d", flag.name, value);
    return value;
  }

  private boolean parseBoolean(Flag flag) {
    String value = value(flag);
    return switch (value) {
      case "true" -> true;
      case "false" -> false;
      default -> throw usage("%s must be true or false, got '%s'", flag.name, value);
    };
  }

  private List<Path> allowedPathRoots() {
    List<String> given = values(Flag.ALLOWED_PATH_ROOT);
    List<Path> roots = new ArrayList<>();
    for (String root : given.isEmpty() ? List.of(Flag.ALLOWED_PATH_ROOT.defaultValue) : given) {
      Path path;
      try {
        path = Path.of(root);
      } catch (InvalidPathException e) {
        throw usage("--allowed-path-root '%s' is not a valid path", root);
      }
      check(
          path.isAbsolute() && !path.equals(path.getRoot()),
          "--allowed-path-root '%s' must be an absolute directory other than /",
          path);
      roots.add(path.normalize());
    }
    return List.copyOf(roots);
  }

  private String checkAddress(Flag flag) {
    String address = value(flag);
    if (!address.isEmpty()) {
      try {
        HostPort.parse(address);
      } catch (IllegalArgumentException e) {
        throw usage("%s: %s", flag.name, e.getMessage());
      }
    }
    return address;
  }

  /** Built-in registration is on when {@code --kubelet-registration-path} is given. */
  private Optional<KubeletRegistration> parseRegistration(String driverName, String endpoint) {
    String path = value(Flag.KUBELET_REGISTRATION_PATH);
    if (path == null) {
      check(
          !given.containsKey(Flag.REGISTRATION_DIR),
          "--registration-dir needs --kubelet-registration-path");
      return Optional.empty();
    }
    Path kubeletEndpoint = cleanAbsolute(Flag.KUBELET_REGISTRATION_PATH, path);
    Path dir = cleanAbsolute(Flag.REGISTRATION_DIR, value(Flag.REGISTRATION_DIR));
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
  private static Path cleanAbsolute(Flag flag, String value) {
    Path path;
    try {
      path = Path.of(value);
    } catch (InvalidPathException e) {
      throw usage("%s '%s' is not a valid path", flag.name, value);
    }
    check(
        path.isAbsolute() && path.getNameCount() > 0 && path.normalize().toString().equals(value),
        "%s '%s' must be an absolute, clean path other than / (no '.', '..', '//' or trailing '/')",
        flag.name,
        value);
    return path;
  }

  private DriverConfig.Mode parseMode() {
    String mode = value(Flag.MODE);
    return switch (mode.toLowerCase(Locale.ROOT)) {
      case "node" -> DriverConfig.Mode.NODE;
      case "controller" -> DriverConfig.Mode.CONTROLLER;
      default -> throw usage("--mode must be node or controller, got '%s'", mode);
    };
  }

  private List<PoolConfig> parsePools(DriverConfig.Mode mode) {
    if (mode == DriverConfig.Mode.CONTROLLER) {
      return List.of();
    }
    check(given.containsKey(Flag.POOL), "at least one --pool is required in node mode");
    List<PoolConfig> parsed = new ArrayList<>();
    Set<String> names = new HashSet<>();
    for (String pool : values(Flag.POOL)) {
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
  public static final class UsageException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    UsageException(String message) {
      super(message);
    }
  }
}
