package dev.soko.driver.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.driver.http.HttpEndpoint;
import dev.soko.driver.pool.PoolReport;
import dev.soko.driver.pool.PoolUsage;
import dev.soko.driver.volume.MetricsView;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class MetricsTest {
  @Test
  void poolAndVolumeGaugesAreReadAtEveryScrapeInBaseUnits() {
    PrometheusRpcMetrics metrics = new PrometheusRpcMetrics();
    PoolReport pool = new PoolReport("fast", new PoolUsage(1000, 600, 350), 4000, 2500, 350);
    MetricsView[] view = {
      new MetricsView(
          List.of(new MetricsView.PoolRow(pool, 2, 1)),
          List.of(
              new MetricsView.VolumeRow("v-1", "fast", 2000, false),
              new MetricsView.VolumeRow("v-2", "fast", 500, true)))
    };
    StorageGauges gauges =
        new StorageGauges(
            metrics.registry(),
            "n1",
            () -> {
              if (view[0] == null) {
                throw new IllegalStateException("the pool's disk is gone");
              }
              return view[0];
            });
    metrics.beforeScrape(gauges::refresh);
    String labels = "{node=\"n1\",pool=\"fast\"}";
    assertThat(metrics.scrape())
        .contains("# TYPE soko_pool_size_bytes gauge")
        .contains("soko_pool_size_bytes" + labels + " 1000.0")
        .contains("soko_pool_used_bytes" + labels + " 600.0")
        .contains("soko_pool_available_bytes" + labels + " 350.0")
        .contains("soko_pool_capacity_bytes" + labels + " 4000.0")
        .contains("soko_pool_provisioned_bytes" + labels + " 2500.0")
        .contains("soko_pool_headroom_bytes" + labels + " 350.0")
        .contains("soko_pool_volumes" + labels + " 2.0")
        .contains("soko_pool_snapshots" + labels + " 1.0")
        .contains("soko_volume_capacity_bytes{node=\"n1\",pool=\"fast\",volume=\"v-1\"} 2000.0")
        .contains("soko_volume_condition_abnormal{node=\"n1\",pool=\"fast\",volume=\"v-2\"} 1.0");

    view[0] = new MetricsView(List.of(new MetricsView.PoolRow(pool, 0, 0)), List.of());
    assertThat(metrics.scrape())
        .as("a deleted volume's series goes with the next scrape")
        .doesNotContain("v-1")
        .contains("soko_pool_volumes" + labels + " 0.0");

    view[0] = null; // a source that fails keeps the last rows and the scrape answers
    assertThat(metrics.scrape()).contains("soko_pool_volumes" + labels + " 0.0");
  }

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
