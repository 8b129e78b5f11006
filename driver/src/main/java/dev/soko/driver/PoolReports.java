package dev.soko.driver;

import dev.soko.driver.cli.Version;
import dev.soko.driver.config.DriverConfig;
import dev.soko.driver.kube.KubeApi;
import dev.soko.driver.report.PoolReporter;
import dev.soko.driver.report.ReportIdentity;
import dev.soko.driver.volume.VolumeManager;
import java.time.Clock;
import java.util.Optional;
import org.slf4j.LoggerFactory;

/**
 * Starts the node's pool report (its StorageNode and the PoolRefused Events) when the driver runs
 * in a cluster ({@link ClusterAccess}) under a StorageCluster; see {@link ReportIdentity} for how
 * the report is named.
 */
final class PoolReports {
  private PoolReports() {}

  /**
   * The running reporter, or null when there is no API server to report to; {@code dataEndpoint} is
   * where this node's data port serves, when it does.
   */
  static PoolReporter start(
      Optional<KubeApi> api,
      DriverConfig config,
      VolumeManager volumes,
      Optional<String> dataEndpoint) {
    Optional<ReportIdentity> id;
    try {
      id = ReportIdentity.fromEnvironment(System.getenv(), config.nodeId());
    } catch (IllegalArgumentException e) {
      LoggerFactory.getLogger(PoolReports.class)
          .warn("not reporting pools to the API server: {}", e.getMessage());
      return null;
    }
    if (api.isEmpty()) {
      LoggerFactory.getLogger(PoolReports.class).info("no API server: pools are not reported");
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
            dataEndpoint,
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
