package dev.soko.driver.nri;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The plugin against a real containerd (the local cluster's, from the tools cache), started on a
 * private root, state and sockets with NRI on: it registers, the runtime configures it and
 * synchronizes with it, and after the runtime restarts it registers again by itself. Starting a
 * container needs the CRI with an image, a network and a pod, which the end-to-end test
 * (IoLimitsE2E) has; this test stops at the handshake.
 */
class NriPluginIT {
  private static final Duration WAIT = Duration.ofSeconds(20);

  @TempDir Path dir;
  Path socket;
  Process containerd;

  @BeforeEach
  void runtime() throws IOException, InterruptedException {
    Path bin =
        Path.of(
            System.getenv()
                .getOrDefault("SOKO_CACHE", System.getProperty("user.home") + "/.cache/soko"),
            "bin",
            "containerd");
    assertThat(bin).as("run `hack/tools.sh containerd` first").isExecutable();
    socket = dir.resolve("nri/nri.sock");
    Files.writeString(
        dir.resolve("config.toml"),
        String.join(
            "\n",
            "version = 3",
            "root = '" + dir.resolve("root") + "'",
            "state = '" + dir.resolve("state") + "'",
            "oom_score = 0",
            "[grpc]",
            "  address = '" + dir.resolve("containerd.sock") + "'",
            "[ttrpc]",
            "  address = '" + dir.resolve("containerd.sock.ttrpc") + "'",
            "[metrics]",
            "  address = ''",
            "[plugins]",
            "  [plugins.'io.containerd.nri.v1.nri']",
            "    disable = false",
            "    socket_path = '" + socket + "'",
            "  [plugins.'io.containerd.grpc.v1.cri']",
            "    stream_server_address = '127.0.0.1'",
            "    stream_server_port = '0'",
            ""));
    containerd =
        new ProcessBuilder(
                List.of(bin.toString(), "--config", dir.resolve("config.toml").toString()))
            .redirectErrorStream(true)
            .redirectOutput(
                ProcessBuilder.Redirect.appendTo(dir.resolve("containerd.log").toFile()))
            .start();
    await(() -> Files.exists(socket) ? 1 : 0, 1, "containerd's NRI socket " + socket);
  }

  @AfterEach
  void stopRuntime() throws InterruptedException, IOException {
    stop();
    System.out.println(Files.readString(dir.resolve("containerd.log")));
  }

  @Test
  void registersAndIsSynchronizedAgainAfterTheRuntimeRestarts() throws Exception {
    try (NriPlugin plugin = new NriPlugin(socket, "soko-io-limits", "50", (pod, c) -> {}).start()) {
      await(plugin::synchronizations, 1, "the runtime's Synchronize");
      assertThat(Files.readString(dir.resolve("containerd.log")))
          .contains("soko-io-limits")
          .doesNotContain("failed to register plugin");

      stop();
      runtime();
      await(plugin::synchronizations, 2, "the restarted runtime's Synchronize");
    }
  }

  private void stop() throws InterruptedException {
    if (containerd != null && containerd.isAlive()) {
      containerd.destroy();
      if (!containerd.waitFor(10, TimeUnit.SECONDS)) {
        containerd.destroyForcibly().waitFor();
      }
    }
  }

  private static void await(IntSupplier value, int atLeast, String what)
      throws InterruptedException {
    Instant end = Instant.now().plus(WAIT);
    while (value.getAsInt() < atLeast) {
      assertThat(Instant.now()).as("waiting for " + what).isBefore(end);
      Thread.sleep(100);
    }
  }
}
