package dev.soko.operator.harness;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The operator as users run it: the shaded jar through its launcher (operator/bin/soko-operator,
 * the image's entry point and JVM flags), a child process with its own kubeconfig and health port.
 */
public final class OperatorProcess implements AutoCloseable {
  private final Process process;
  private final int healthPort;
  private final Path log;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  private OperatorProcess(Process process, int healthPort, Path log) {
    this.process = process;
    this.healthPort = healthPort;
    this.log = log;
  }

  /**
   * @param identity the leader-election identity (HOSTNAME, as a pod's name would be)
   * @param leaseNamespace null: --no-leader-election
   */
  public static OperatorProcess start(
      Path kubeconfig, Path log, String identity, String leaseNamespace, Duration resync)
      throws IOException {
    Path root = repositoryRoot();
    Path jar = root.resolve("operator/target/soko-operator.jar");
    if (!Files.isRegularFile(jar)) {
      throw new IllegalStateException(jar + " is missing: run `mvn -pl operator -am package`");
    }
    int port = ControlPlane.freePort();
    List<String> cmd = new ArrayList<>();
    cmd.add(root.resolve("operator/bin/soko-operator").toString());
    cmd.add("run");
    cmd.add("--kubeconfig");
    cmd.add(kubeconfig.toString());
    cmd.add("--health-address");
    cmd.add("127.0.0.1:" + port);
    cmd.add("--resync-interval");
    cmd.add(resync.toSeconds() + "s");
    if (leaseNamespace == null) {
      cmd.add("--no-leader-election");
    } else {
      cmd.add("--leader-election-namespace");
      cmd.add(leaseNamespace);
    }
    ProcessBuilder pb =
        new ProcessBuilder(cmd)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    pb.environment().put("SOKO_OPERATOR_JAR", jar.toString());
    pb.environment().put("HOSTNAME", identity);
    pb.environment().remove("KUBECONFIG");
    Process process = pb.start();
    Runtime.getRuntime()
        .addShutdownHook(new Thread(process::destroyForcibly, "operator-process-stop"));
    return new OperatorProcess(process, port, log);
  }

  /** The repository root: the working directory of a Maven module's tests is the module. */
  public static Path repositoryRoot() {
    Path cwd = Path.of("").toAbsolutePath();
    return Files.isDirectory(cwd.resolve("operator")) ? cwd : cwd.getParent();
  }

  /** Waits until /readyz answers 200 (informers synced). */
  public OperatorProcess awaitReady(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IllegalStateException(
            "the operator exited with " + process.exitValue() + "; see " + log);
      }
      if (ready()) {
        return this;
      }
      Thread.sleep(100);
    }
    throw new IllegalStateException(
        "the operator was not ready within " + timeout + "; see " + log);
  }

  public boolean ready() {
    return get("/readyz") == 200;
  }

  private int get(String path) {
    try {
      return http.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + healthPort + path))
                  .timeout(Duration.ofSeconds(2))
                  .build(),
              HttpResponse.BodyHandlers.discarding())
          .statusCode();
    } catch (IOException e) {
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    }
  }

  /** A metric's value from /metrics (the sum over its labels), or -1 when absent. */
  public double metric(String name) throws IOException, InterruptedException {
    String body =
        http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + healthPort + "/metrics"))
                    .timeout(Duration.ofSeconds(5))
                    .build(),
                HttpResponse.BodyHandlers.ofString())
            .body();
    double sum = 0;
    boolean found = false;
    for (String line : body.split("\n")) {
      if (line.startsWith(name + " ") || line.startsWith(name + "{")) {
        sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
        found = true;
      }
    }
    return found ? sum : -1;
  }

  public long pid() {
    return process.pid();
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  public Path log() {
    return log;
  }

  /**
   * The JVM's resident set size in KiB, from /proc. The launcher execs the JVM, except on a first
   * run of a jar, when it waits for its JVM child to write the class-data archive: then the
   * child's.
   */
  public long rssKiB() throws IOException {
    long pid = process.descendants().findFirst().map(ProcessHandle::pid).orElse(process.pid());
    for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
      if (line.startsWith("VmRSS:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", ""));
      }
    }
    throw new IllegalStateException("no VmRSS for pid " + pid);
  }

  /** SIGKILL, as the OOM killer or a node failure would: no shutdown hook runs. */
  public void kill9() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor(10, TimeUnit.SECONDS);
  }

  @Override
  public void close() throws InterruptedException {
    if (process.isAlive()) {
      process.destroy();
      if (!process.waitFor(20, TimeUnit.SECONDS)) {
        kill9();
      }
    }
  }
}
