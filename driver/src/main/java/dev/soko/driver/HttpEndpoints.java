package dev.soko.driver;

import dev.soko.driver.cli.HostPort;
import dev.soko.driver.config.DriverConfig;
import dev.soko.driver.health.Healthz;
import dev.soko.driver.health.Readiness;
import dev.soko.driver.http.HttpEndpoint;
import dev.soko.driver.metrics.PrometheusRpcMetrics;
import dev.soko.driver.server.DriverServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts the HTTP endpoints the flags ask for: {@code /metrics} at {@code --metrics-address},
 * {@code /healthz} and {@code /readyz} at {@code --health-address}. One server per distinct
 * address, so the two flags given the same address share one port, as a pod spec with one
 * probe-and-scrape port expects. They run on the CSI server's threads (see {@link HttpEndpoint}).
 */
final class HttpEndpoints {
  private static final Logger LOG = LoggerFactory.getLogger(HttpEndpoints.class);

  private HttpEndpoints() {}

  /**
   * @param metrics the metrics to serve; null when {@code --metrics-address} is not given
   * @param readiness what Probe answers, for {@code /healthz}
   * @param serving whether the driver serves its node, for {@code /readyz}
   */
  static List<HttpEndpoint> start(
      DriverConfig config,
      DriverServer server,
      PrometheusRpcMetrics metrics,
      Readiness readiness,
      Readiness serving)
      throws IOException {
    // Unresolved addresses compare by host name and port, so "0.0.0.0:9808" twice is one server.
    Map<InetSocketAddress, Map<String, HttpEndpoint.Route>> byAddress = new LinkedHashMap<>();
    if (metrics != null) {
      routes(byAddress, config.metricsAddress()).put(PrometheusRpcMetrics.PATH, metrics.route());
    }
    if (!config.healthAddress().isEmpty()) {
      Map<String, HttpEndpoint.Route> health = routes(byAddress, config.healthAddress());
      health.put(Healthz.PATH, Healthz.liveness(readiness));
      health.put(Healthz.READY_PATH, Healthz.readiness(serving));
    }
    List<HttpEndpoint> started = new ArrayList<>();
    try {
      for (var entry : byAddress.entrySet()) {
        InetSocketAddress address = entry.getKey();
        InetSocketAddress bind = new InetSocketAddress(address.getHostString(), address.getPort());
        HttpEndpoint endpoint;
        try {
          endpoint = server.serveHttp(bind, entry.getValue());
        } catch (IOException e) {
          throw new IOException("cannot serve HTTP at " + bind + ": " + e.getMessage(), e);
        }
        started.add(endpoint);
        LOG.atInfo()
            .addKeyValue("address", endpoint.address())
            .addKeyValue("paths", String.join(",", entry.getValue().keySet()))
            .log("serving HTTP");
      }
    } catch (IOException | RuntimeException e) {
      started.forEach(HttpEndpoint::close);
      throw e;
    }
    return started;
  }

  private static Map<String, HttpEndpoint.Route> routes(
      Map<InetSocketAddress, Map<String, HttpEndpoint.Route>> byAddress, String address) {
    return byAddress.computeIfAbsent(HostPort.parse(address), a -> new TreeMap<>());
  }
}
