package dev.soko.driver.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import csi.v1.Csi;
import csi.v1.Csi.ControllerServiceCapability.RPC.Type;
import dev.soko.driver.client.CsiClient;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The jar in {@code --mode controller} as the controller Deployment runs it: Identity plus a
 * Controller that only expands, no Node service, Prometheus metrics on loopback, and a graceful
 * SIGTERM that removes the socket.
 */
class ControllerModeIT {
  private Path root;
  private Process process;

  @BeforeEach
  void setUp() throws Exception {
    root = Files.createTempDirectory("soko-ctrl-");
  }

  @AfterEach
  void tearDown() throws Exception {
    if (process != null && process.isAlive()) {
      process.destroyForcibly().waitFor();
    }
    HostState.release(root);
  }

  @Test
  void servesExpansionAndMetricsAndStopsCleanly() throws Exception {
    int port;
    try (ServerSocket free = new ServerSocket(0)) {
      port = free.getLocalPort();
    }
    Path socket = root.resolve("csi.sock");
    Path log = root.resolve("driver.log");
    process =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-jar",
                Path.of("target", "soko-driver.jar").toString(),
                "--mode=controller",
                "--endpoint=unix://" + socket,
                "--metrics-address=127.0.0.1:" + port,
                "--log-level=debug")
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    try (CsiClient csi = new CsiClient(socket)) {
      assertThat(csi.awaitReady(socket, Duration.ofSeconds(60))).as("ready").isTrue();

      assertThat(
              csi.controller()
                  .controllerGetCapabilities(
                      Csi.ControllerGetCapabilitiesRequest.getDefaultInstance())
                  .getCapabilitiesList())
          .extracting(c -> c.getRpc().getType())
          .containsExactly(Type.EXPAND_VOLUME);
      Csi.ControllerExpandVolumeResponse expand =
          csi.controller()
              .controllerExpandVolume(
                  Csi.ControllerExpandVolumeRequest.newBuilder()
                      .setVolumeId("vol-x")
                      .setCapacityRange(Csi.CapacityRange.newBuilder().setRequiredBytes(1 << 30))
                      .build());
      assertThat(expand.getNodeExpansionRequired()).isTrue();
      assertThat(expand.getCapacityBytes()).isEqualTo(1 << 30);

      StatusRuntimeException create =
          org.assertj.core.api.Assertions.catchThrowableOfType(
              StatusRuntimeException.class,
              () ->
                  csi.controller()
                      .createVolume(Csi.CreateVolumeRequest.newBuilder().setName("x").build()));
      assertThat(create.getStatus().getCode()).isEqualTo(Status.Code.UNIMPLEMENTED);
      StatusRuntimeException nodeInfo =
          org.assertj.core.api.Assertions.catchThrowableOfType(
              StatusRuntimeException.class,
              () -> csi.node().nodeGetInfo(Csi.NodeGetInfoRequest.getDefaultInstance()));
      assertThat(nodeInfo.getStatus().getCode()).isEqualTo(Status.Code.UNIMPLEMENTED);
    }

    HttpResponse<String> metrics =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString());
    assertThat(metrics.statusCode()).isEqualTo(200);
    assertThat(metrics.body())
        .contains("soko_csi_rpc_seconds_count{code=\"OK\",method=\"ControllerExpandVolume\"} 1")
        .contains("soko_csi_rpc_seconds_count{code=\"UNIMPLEMENTED\",method=\"CreateVolume\"} 1");

    process.destroy(); // SIGTERM
    assertThat(process.waitFor(30, TimeUnit.SECONDS)).as("exits after SIGTERM").isTrue();
    assertThat(socket).doesNotExist();
    List<String> lines = Files.readAllLines(log);
    assertThat(lines).anyMatch(l -> l.contains("msg=stopped"));
    assertThat(lines)
        .anyMatch(l -> l.contains("msg=rpc") && l.contains("method=ControllerExpandVolume"));
    assertThat(lines).noneMatch(l -> l.contains("Exception"));
  }
}
