package dev.soko.driver.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.driver.http.HttpEndpoint;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class MetricsTest {
  @Test
  void servesCountsAndHistogramsByMethodAndCode() throws Exception {
    PrometheusRpcMetrics metrics = new PrometheusRpcMetrics();
    metrics.record("CreateVolume", "OK", TimeUnit.MILLISECONDS.toNanos(3));
    metrics.record("CreateVolume", "OK", TimeUnit.MILLISECONDS.toNanos(40));
    metrics.record("DeleteVolume", "NOT_FOUND", TimeUnit.MILLISECONDS.toNanos(1));
    EventLoopGroup eventLoop = new EpollEventLoopGroup(1);
    ExecutorService calls = Executors.newSingleThreadExecutor();
    try (HttpEndpoint server =
        HttpEndpoint.start(
            eventLoop,
            calls,
            new InetSocketAddress("127.0.0.1", 0),
            Map.of(PrometheusRpcMetrics.PATH, metrics.route()))) {
      HttpClient client = HttpClient.newHttpClient();
      URI base = URI.create("http://127.0.0.1:" + server.address().getPort());
      HttpResponse<String> response =
          client.send(
              HttpRequest.newBuilder(base.resolve("/metrics")).build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(response.statusCode()).isEqualTo(200);
      assertThat(response.headers().firstValue("Content-Type"))
          .hasValue(PrometheusRpcMetrics.CONTENT_TYPE);
      String body = response.body();
      assertThat(body)
          .contains("soko_csi_rpc_seconds_count{code=\"OK\",method=\"CreateVolume\"} 2")
          .contains("soko_csi_rpc_seconds_count{code=\"NOT_FOUND\",method=\"DeleteVolume\"} 1")
          .contains(
              "soko_csi_rpc_seconds_bucket{code=\"OK\",method=\"CreateVolume\",le=\"0.005\"} 1")
          .contains(
              "soko_csi_rpc_seconds_bucket{code=\"OK\",method=\"CreateVolume\",le=\"0.05\"} 2");

      assertThat(
              client
                  .send(
                      HttpRequest.newBuilder(base.resolve("/other")).build(),
                      HttpResponse.BodyHandlers.ofString())
                  .statusCode())
          .isEqualTo(404);
    } finally {
      calls.shutdownNow();
      eventLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
  }
}
