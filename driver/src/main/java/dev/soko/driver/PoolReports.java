package dev.soko.driver;

import dev.soko.driver.cli.Version;
import dev.soko.driver.config.DriverConfig;
import dev.soko.driver.report.KubeApi;
import dev.soko.driver.report.PoolReporter;
import dev.soko.driver.report.ReportIdentity;
import dev.soko.driver.volume.VolumeManager;
import java.io.IOException;
import java.time.Clock;
import java.util.Optional;
import org.slf4j.LoggerFactory;

/**
 * Starts the node's pool report (its StorageNode and the PoolRefused Events) when the driver runs
 * in a cluster under a StorageCluster; see {@link KubeApi#fromEnvironment} for when it does and the
 * overrides, and {@link ReportIdentity} for how the report is named.
 */
final class PoolReports {
  private PoolReports() {}

  /** The running reporter, or null when there is no API server to report to. */
  static PoolReporter start(DriverConfig config, VolumeManager volumes) {
    Optional<KubeApi> api;
    Optional<ReportIdentity> id;
    try {
      api = KubeApi.fromEnvironment(System.getenv());
      id = ReportIdentity.fromEnvironment(System.getenv(), config.nodeId());
    } catch (IOException | IllegalArgumentException e) {
      LoggerFactory.getLogger(PoolReports.class)
          .warn("not reporting pools to the API server: {}", e.getMessage());
      return null;
    }
    if (api.isEmpty()) {
      LoggerFactory.getLogger(PoolReports.class)
          .info("not in a cluster (no service-account token): pools are not reported");
      return null;
    }
    if (id.isEmpty()) {
      LoggerFactory.getLogger(PoolReports.class)
          .info(
              "{} is not set (the operator sets it): no StorageCluster reads a report, so pools"
                  + " are not reported",
              ReportIdentity.ENV);
      return null;
    }
    PoolReporter reporter =
        new PoolReporter(
            api.get(),
            id.get(),
            Version.current(),
            volumes::poolVerdicts,
            volumes::metricsView,
            Clock.systemUTC(),
            PoolReporter.PERIOD,
            PoolReporter.MIN_INTERVAL);
    volumes.onPoolVerdicts(reporter::onVerdicts);
    reporter.start();
    return reporter;
  }
}
