package dev.soko.driver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.driver.config.DriverConfig;
import dev.soko.driver.config.Endpoint;
import dev.soko.driver.health.Readiness;
import dev.soko.driver.http.HttpEndpoint;
import dev.soko.driver.metrics.PrometheusRpcMetrics;
import dev.soko.driver.metrics.RpcMetrics;
import dev.soko.driver.server.DriverServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HttpEndpointsTest {
  private final HttpClient client = HttpClient.newHttpClient();
  @TempDir Path temp;
  private DriverServer server;

  @BeforeEach
  void startCsi() throws Exception {
    server =
        DriverServer.start(
            new Endpoint(temp.resolve("csi.sock")), List.of(), RpcMetrics.NONE, () -> true, 2);
  }

  @AfterEach
  void stopCsi() throws Exception {
    server.shutdown(Duration.ofSeconds(5));
  }

  private static DriverConfig config(String metricsAddress, String healthAddress) {
    return new DriverConfig(
        "csi.soko.dev",
        "",
        DriverConfig.Mode.CONTROLLER,
        "unix:///csi/csi.sock",
        List.of(),
        List.of(Path.of("/var/lib/kubelet")),
        0,
        metricsAddress,
        healthAddress,
        Optional.empty(),
        Optional.empty(),
        "info",
        false);
  }

  private int status(HttpEndpoint endpoint, String path) throws Exception {
    URI uri = URI.create("http://127.0.0.1:" + endpoint.address().getPort() + path);
    return client
        .send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.discarding())
        .statusCode();
  }

  @Test
  void metricsAndHealthzGivenTheSameAddressShareOneServer() throws Exception {
    List<HttpEndpoint> endpoints =
        HttpEndpoints.start(
            config("127.0.0.1:0", "127.0.0.1:0"),
            server,
            new PrometheusRpcMetrics(),
            Readiness.ALWAYS,
            () -> Optional.of("not registered"));
    try {
      assertThat(endpoints).hasSize(1);
      assertThat(status(endpoints.get(0), "/metrics")).isEqualTo(200);
      assertThat(status(endpoints.get(0), "/healthz")).isEqualTo(200);
      assertThat(status(endpoints.get(0), "/readyz"))
          .as("readiness answers its own check, not liveness's")
          .isEqualTo(500);
      assertThat(status(endpoints.get(0), "/")).isEqualTo(404);
    } finally {
      endpoints.forEach(HttpEndpoint::close);
    }
  }

  @Test
  void metricsAndHealthzAtDifferentAddressesServeOnlyTheirOwnPath() throws Exception {
    List<HttpEndpoint> endpoints =
        HttpEndpoints.start(
            config("127.0.0.1:0", "localhost:0"),
            server,
            new PrometheusRpcMetrics(),
            Readiness.ALWAYS,
            Readiness.ALWAYS);
    try {
      assertThat(endpoints).hasSize(2);
      assertThat(status(endpoints.get(0), "/metrics")).isEqualTo(200);
      assertThat(status(endpoints.get(0), "/healthz")).isEqualTo(404);
      assertThat(status(endpoints.get(1), "/healthz")).isEqualTo(200);
      assertThat(status(endpoints.get(1), "/readyz")).isEqualTo(200);
      assertThat(status(endpoints.get(1), "/metrics")).isEqualTo(404);
    } finally {
      endpoints.forEach(HttpEndpoint::close);
    }
  }

  @Test
  void healthzAloneLoadsNoMetricsAndAPortInUseFailsWithItsAddress() throws Exception {
    List<HttpEndpoint> endpoints =
        HttpEndpoints.start(
            config("", "127.0.0.1:0"),
            server,
            null,
            () -> Optional.of("starting"),
            () -> Optional.of("starting"));
    try {
      assertThat(endpoints).hasSize(1);
      assertThat(status(endpoints.get(0), "/healthz")).isEqualTo(500);
      String taken = "127.0.0.1:" + endpoints.get(0).address().getPort();
      org.assertj.core.api.Assertions.assertThatThrownBy(
              () ->
                  HttpEndpoints.start(
                      config("", taken), server, null, Readiness.ALWAYS, Readiness.ALWAYS))
          .isInstanceOf(java.io.IOException.class)
          .hasMessageContaining("cannot serve HTTP at");
    } finally {
      endpoints.forEach(HttpEndpoint::close);
    }
  }
}
