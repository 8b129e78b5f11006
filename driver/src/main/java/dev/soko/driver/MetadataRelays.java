package dev.soko.driver;

import dev.soko.driver.config.DriverConfig;
import dev.soko.driver.kube.KubeApi;
import dev.soko.driver.report.ReportIdentity;
import dev.soko.driver.report.SnapshotHomes;
import dev.soko.driver.transfer.DataTls;
import dev.soko.driver.transfer.SnapshotMetadataRelay;
import java.io.IOException;
import java.util.Map;
import java.util.Optional;
import org.slf4j.LoggerFactory;

/**
 * The controller's SnapshotMetadata service: a relay to the nodes' data ports ({@link
 * SnapshotMetadataRelay}), served when the controller has the data path's credentials ({@code
 * --data-tls-dir}), the API server (to find a snapshot's node) and its StorageCluster's name
 * ({@value ReportIdentity#ENV}, whose StorageNodes name the nodes' data endpoints). Without one of
 * them it is not served, and the controller does not advertise it.
 */
final class MetadataRelays {
  private MetadataRelays() {}

  static Optional<SnapshotMetadataRelay> start(
      DriverConfig config, DataTls tls, Map<String, String> env) {
    var log = LoggerFactory.getLogger(MetadataRelays.class);
    if (tls == null) {
      return Optional.empty();
    }
    Optional<KubeApi> api;
    try {
      api = KubeApi.fromEnvironment(env);
    } catch (IOException e) {
      log.warn("no SnapshotMetadata relay: the API server cannot be used: {}", e.getMessage());
      return Optional.empty();
    }
    String storageCluster = env.getOrDefault(ReportIdentity.ENV, "").strip();
    if (api.isEmpty() || storageCluster.isEmpty()) {
      log.info(
          "no SnapshotMetadata relay: {}",
          api.isEmpty() ? "no API server access" : ReportIdentity.ENV + " is not set");
      return Optional.empty();
    }
    SnapshotHomes homes = SnapshotHomes.lookup(api.get(), config.driverName(), storageCluster);
    log.info("serving SnapshotMetadata by relaying to the snapshots' nodes");
    return Optional.of(new SnapshotMetadataRelay(homes::homeOf, tls));
  }
}
