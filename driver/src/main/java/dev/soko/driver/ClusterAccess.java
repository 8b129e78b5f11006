package dev.soko.driver;

import dev.soko.driver.config.DriverConfig;
import dev.soko.driver.kube.KubeApi;
import dev.soko.driver.pool.NodeLabels;
import dev.soko.driver.report.ImportedSnapshots;
import dev.soko.driver.report.NodeWatch;
import dev.soko.driver.report.ReportIdentity;
import dev.soko.driver.report.SnapshotHomes;
import dev.soko.driver.volume.RemoteSnapshots;
import dev.soko.driver.volume.SnapshotFilter;
import dev.soko.driver.volume.VolumeManager;
import java.io.IOException;
import java.util.Optional;
import org.slf4j.LoggerFactory;

/**
 * The API server as a node-mode driver sees it: a client when it runs in a cluster (see {@link
 * KubeApi#fromEnvironment} for when it does and the overrides), and its Node's labels, read once
 * before the pools are judged and then watched. Without a client the labels stay unknown, so pools
 * with a node selector are not selected: run by hand, under csi-sanity or with {@code
 * SOKO_POOL_REPORT=off}, a pool meant for some nodes is never used by accident. With {@code
 * --label-imported-snapshots}, it also labels the pre-provisioned snapshot contents this node holds
 * ({@link ImportedSnapshots}).
 */
final class ClusterAccess implements AutoCloseable {
  final Optional<KubeApi> api;
  final NodeLabels labels;
  private final NodeWatch watch;
  private volatile ImportedSnapshots imports;

  private ClusterAccess(Optional<KubeApi> api, NodeLabels labels, NodeWatch watch) {
    this.api = api;
    this.labels = labels;
    this.watch = watch;
  }

  static ClusterAccess connect(DriverConfig config) {
    var log = LoggerFactory.getLogger(ClusterAccess.class);
    Optional<KubeApi> api;
    try {
      api = KubeApi.fromEnvironment(System.getenv());
    } catch (IOException e) {
      log.warn("no API server access: {}", e.getMessage());
      return without("the API server cannot be used: " + e.getMessage());
    }
    if (api.isEmpty()) {
      log.info("not in a cluster (no service-account token, or SOKO_POOL_REPORT=off)");
      return without("no API server access (not in a cluster, or SOKO_POOL_REPORT=off)");
    }
    NodeLabels labels = NodeLabels.unknownBecause("not read from the API server yet");
    NodeWatch watch = new NodeWatch(api.get(), config.nodeId(), labels);
    if (!watch.readNow()) {
      log.warn("the labels of Node {} could not be read yet; retrying", config.nodeId());
    }
    watch.start();
    return new ClusterAccess(api, labels, watch);
  }

  /**
   * Starts labelling the imported snapshot contents whose snapshot {@code volumes} holds, when the
   * flag asks for it; after the volumes are open, so that the catalog is read before the first
   * content is judged.
   */
  void labelImportedSnapshots(DriverConfig config, VolumeManager volumes) {
    if (!config.labelImportedSnapshots()) {
      return;
    }
    if (api.isEmpty()) {
      LoggerFactory.getLogger(ClusterAccess.class)
          .warn(
              "--label-imported-snapshots: no API server access, so pre-provisioned snapshot"
                  + " contents are not labelled and this node's csi-snapshotter never serves them");
      return;
    }
    imports =
        new ImportedSnapshots(
            api.get(),
            config.driverName(),
            config.nodeId(),
            id -> !volumes.listSnapshots(new SnapshotFilter(id, ""), "", 1).items().isEmpty());
    imports.start();
  }

  /**
   * The snapshots and volumes other nodes hold, found through the API server ({@link
   * SnapshotHomes}) and described by {@code describer} and {@code volumeDescriber} at their node's
   * data endpoint; none without API access or outside a StorageCluster (no StorageNode names
   * another node's endpoint), where a restore of a snapshot this node does not hold finds none, as
   * before.
   */
  RemoteSnapshots snapshotHomes(
      DriverConfig config,
      SnapshotHomes.Describer describer,
      SnapshotHomes.VolumeDescriber volumeDescriber) {
    var log = LoggerFactory.getLogger(ClusterAccess.class);
    Optional<ReportIdentity> id;
    try {
      id = ReportIdentity.fromEnvironment(System.getenv(), config.nodeId());
    } catch (IllegalArgumentException e) {
      id = Optional.empty();
    }
    if (api.isEmpty() || id.isEmpty()) {
      log.info(
          "restores and clones copy nothing from other nodes: {}",
          api.isEmpty() ? "no API server access" : ReportIdentity.ENV + " is not set");
      return RemoteSnapshots.NONE;
    }
    return new SnapshotHomes(
        api.get(),
        config.driverName(),
        config.nodeId(),
        id.get().storageCluster(),
        describer,
        volumeDescriber);
  }

  private static ClusterAccess without(String reason) {
    return new ClusterAccess(Optional.empty(), NodeLabels.unknownBecause(reason), null);
  }

  @Override
  public void close() {
    if (imports != null) {
      imports.close();
    }
    if (watch != null) {
      watch.close();
    }
  }
}
