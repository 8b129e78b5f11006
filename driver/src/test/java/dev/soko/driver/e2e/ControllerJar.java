package dev.soko.driver.e2e;

import dev.soko.driver.client.CsiClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The packaged driver in {@code --mode controller}, as the controller Deployment runs it: the
 * external resizer's ControllerExpandVolume goes here, which cannot see any pool and so leaves all
 * of the growth to NodeExpandVolume on the node.
 */
final class ControllerJar implements AutoCloseable {
  private final Path socket;
  private final Path log;
  private final Process process;
  private final CsiClient client;

  private ControllerJar(Path root) throws IOException, InterruptedException {
    this.socket = root.resolve("controller.sock");
    this.log = root.resolve("controller.log");
    this.process =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-jar",
                Path.of("target", "soko-driver.jar").toString(),
                "--mode=controller",
                "--endpoint=unix://" + socket)
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    this.client = new CsiClient(socket);
    if (!client.awaitReady(socket, Duration.ofSeconds(60))) {
      close();
      throw new IllegalStateException("controller not ready within 60 s; log:\n" + log());
    }
  }

  /** Starts a controller whose socket and log live in {@code root}; waits for a ready Probe. */
  static ControllerJar start(Path root) throws IOException, InterruptedException {
    return new ControllerJar(root);
  }

  CsiClient csi() {
    return client;
  }

  String log() throws IOException {
    return Files.exists(log) ? Files.readString(log) : "(no log)";
  }

  @Override
  public void close() throws InterruptedException {
    client.close();
    process.destroy();
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor();
    }
  }
}
