package dev.soko.driver.e2e;

import dev.soko.driver.client.CsiClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The packaged driver ({@code target/soko-driver.jar}) run as a real process on a pool in a temp
 * directory, the way a node DaemonSet runs it. Integration tests start, kill and restart it.
 */
final class DriverJar implements AutoCloseable {
  private static final Path JAR = Path.of("target", "soko-driver.jar");

  final Path root;
  final Path pool;
  final Path mounts;
  final Path socket;
  private final Path log;
  private Process process;
  private CsiClient client;
  private String nodeId = "it-node";
  private Map<String, String> environment = Map.of();

  DriverJar(Path root) throws IOException {
    if (!Files.isRegularFile(JAR)) {
      throw new IllegalStateException(JAR.toAbsolutePath() + " is missing: run mvn package first");
    }
    this.root = root;
    this.pool = Files.createDirectories(root.resolve("pool"));
    this.mounts = Files.createDirectories(root.resolve("mnt"));
    this.socket = root.resolve("csi.sock");
    this.log = root.resolve("driver.log");
  }

  /** Runs the driver as node {@code nodeId} with {@code environment} added to the test's own. */
  DriverJar asNode(String nodeId, Map<String, String> environment) {
    this.nodeId = nodeId;
    this.environment = Map.copyOf(environment);
    return this;
  }

  /** Starts the driver and waits for a ready Probe. */
  CsiClient start() throws IOException, InterruptedException {
    return start(List.of(), pool);
  }

  /**
   * Starts the driver under {@code wrapper}, a command that ends by running the arguments after its
   * own (one that first enters a mount namespace of its own, say), with the pool at {@code
   * poolPath} as the driver sees it there; waits for a ready Probe.
   */
  CsiClient start(List<String> wrapper, Path poolPath) throws IOException, InterruptedException {
    launch(wrapper, poolFlag(poolPath), List.of());
    return awaitReady();
  }

  /** Starts the driver with {@code pools} (each a --pool value) and {@code extraFlags}. */
  CsiClient startWithPools(List<String> pools, List<String> extraFlags)
      throws IOException, InterruptedException {
    List<String> flags = new ArrayList<>();
    pools.forEach(p -> flags.addAll(List.of("--pool", p)));
    launch(List.of(), flags, extraFlags);
    return awaitReady();
  }

  private CsiClient awaitReady() throws IOException, InterruptedException {
    client = new CsiClient(socket);
    if (!client.awaitReady(socket, Duration.ofSeconds(60))) {
      throw new IllegalStateException("driver not ready within 60 s; log:\n" + log());
    }
    return client;
  }

  /** Starts the driver with {@code extraFlags} and returns at once, without waiting for it. */
  Process launch(List<String> extraFlags) throws IOException {
    return launch(List.of(), poolFlag(pool), extraFlags);
  }

  private static List<String> poolFlag(Path poolPath) {
    return List.of("--pool", "name=default,path=" + poolPath + ",capacity=8Gi");
  }

  private Process launch(List<String> wrapper, List<String> poolFlags, List<String> extraFlags)
      throws IOException {
    List<String> command = new ArrayList<>(wrapper);
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-jar", JAR.toString()));
    command.addAll(
        List.of(
            "--endpoint",
            "unix://" + socket,
            "--node-id",
            nodeId,
            "--mode",
            "node",
            "--allowed-path-root",
            mounts.toString(),
            // A driver on the test host never registers with the host's container runtime.
            "--nri-socket="));
    command.addAll(poolFlags);
    command.addAll(extraFlags);
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    builder.environment().putAll(environment);
    process = builder.start();
    return process;
  }

  /** {@code kill -9}: no shutdown hook, no cleanup, as a node crash or OOM kill would do. */
  void kill() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor(30, TimeUnit.SECONDS);
    // After the process is gone, so that a call in flight ends with the connection (UNAVAILABLE)
    // while the client's event loop still runs: a loop shut down first can drop the call's close,
    // and its caller then waits for ever.
    closeClient();
  }

  /** SIGTERM: the graceful path. */
  void stop() throws InterruptedException {
    closeClient();
    if (process != null && process.isAlive()) {
      process.destroy();
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor();
      }
    }
  }

  String log() throws IOException {
    return Files.exists(log) ? Files.readString(log) : "(no log)";
  }

  private void closeClient() {
    if (client != null) {
      client.close();
      client = null;
    }
  }

  @Override
  public void close() throws InterruptedException {
    stop();
  }
}
