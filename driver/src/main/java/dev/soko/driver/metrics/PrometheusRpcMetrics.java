package dev.soko.driver.metrics;

import dev.soko.driver.http.HttpEndpoint;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * Per-RPC counts and latency histograms, tagged by method and code. The histogram has fixed buckets
 * from 1 ms to 60 s (mount and mkfs calls take seconds) instead of micrometer's 70+ percentile
 * buckets, which would multiply the series for every method and code. The endpoint also serves the
 * pool and volume gauges of {@link StorageGauges} from the same registry.
 */
public final class PrometheusRpcMetrics implements RpcMetrics {
  static final String NAME = "soko.csi.rpc";
  public static final String PATH = "/metrics";

  /** The Prometheus text exposition format, version 0.0.4. */
  public static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

  private static final Duration[] BUCKETS = {
    Duration.ofMillis(1), Duration.ofMillis(5), Duration.ofMillis(10), Duration.ofMillis(25),
    Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(250), Duration.ofMillis(500),
    Duration.ofSeconds(1), Duration.ofMillis(2500), Duration.ofSeconds(5), Duration.ofSeconds(10),
    Duration.ofSeconds(30), Duration.ofSeconds(60)
  };

  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final ConcurrentMap<String, Timer> timers = new ConcurrentHashMap<>();

  @Override
  public void record(String method, String code, long nanos) {
    timers
        .computeIfAbsent(
            method + ' ' + code,
            key ->
                Timer.builder(NAME)
                    .description("CSI calls served, by method and gRPC status code")
                    .tag("method", method)
                    .tag("code", code)
                    .serviceLevelObjectives(BUCKETS)
                    .register(registry))
        .record(nanos, TimeUnit.NANOSECONDS);
  }

  /** Runs before every scrape (gauges that read their source fresh, e.g. {@link StorageGauges}). */
  private final List<Runnable> beforeScrape = new CopyOnWriteArrayList<>();

  /** The registry, for gauges served beside the RPC metrics. */
  public MeterRegistry registry() {
    return registry;
  }

  public void beforeScrape(Runnable refresh) {
    beforeScrape.add(refresh);
  }

  /** The Prometheus text exposition of every metric. */
  public synchronized String scrape() {
    beforeScrape.forEach(Runnable::run);
    return registry.scrape();
  }

  /** {@code GET /metrics}. */
  public HttpEndpoint.Route route() {
    return () -> new HttpEndpoint.Reply(200, CONTENT_TYPE, scrape());
  }
}
