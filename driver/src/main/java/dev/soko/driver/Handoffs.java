package dev.soko.driver;

import dev.soko.driver.config.DriverConfig;
import dev.soko.driver.csi.ClusterControllerService;
import dev.soko.driver.csi.Topology;
import dev.soko.driver.handoff.LocalRequests;
import dev.soko.driver.handoff.NodeRequestClient;
import dev.soko.driver.handoff.NodeRequestWatch;
import dev.soko.driver.handoff.RemoteExpand;
import dev.soko.driver.handoff.RemoteModify;
import dev.soko.driver.handoff.RemoteSnapshots;
import dev.soko.driver.handoff.VolumeOwners;
import dev.soko.driver.kube.KubeApi;
import dev.soko.driver.report.ContentLabeller;
import dev.soko.driver.report.GroupSnapshotClasses;
import dev.soko.driver.report.GroupSnapshotContents;
import dev.soko.driver.report.NodeDataEndpoints;
import dev.soko.driver.report.ReportIdentity;
import dev.soko.driver.transfer.DataTls;
import dev.soko.driver.transfer.GroupCoordinator;
import dev.soko.driver.transfer.GroupPartLinks;
import dev.soko.driver.volume.VolumeManager;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.LoggerFactory;

/**
 * Wires the controller → node path, whose two halves meet in NodeRequests in the driver's namespace
 * ({@value #NAMESPACE_ENV}, which the operator sets on both pods): the controller-mode process
 * hands each growth and ModifyVolume, and where the operator deploys the group snapshotter ({@value
 * #GROUP_SNAPSHOTTER_ENV}, its identity) each snapshot call, to the owning node; each node-mode
 * process carries out its own. Without API server access or the namespace, neither half runs, and
 * the controller advertises neither MODIFY_VOLUME nor snapshots.
 */
final class Handoffs {
  static final String NAMESPACE_ENV = "SOKO_NAMESPACE";
  static final String GROUP_SNAPSHOTTER_ENV = "SOKO_GROUP_SNAPSHOTTER";

  /**
   * The controller's half.
   *
   * @param expander growth through the nodes
   * @param modifier ModifyVolume through the nodes
   * @param snapshots the snapshot calls through the nodes, with the group snapshotter
   * @param groupLabellers what hands group contents and classes to the group snapshotter
   */
  record Controller(
      Optional<ClusterControllerService.VolumeExpander> expander,
      Optional<ClusterControllerService.VolumeModifier> modifier,
      Optional<RemoteSnapshots> snapshots,
      List<ContentLabeller> groupLabellers,
      Optional<GroupPartLinks> groupLinks)
      implements AutoCloseable {
    static final Controller NONE =
        new Controller(
            Optional.empty(), Optional.empty(), Optional.empty(), List.of(), Optional.empty());

    @Override
    public void close() {
      groupLabellers.forEach(ContentLabeller::close);
      groupLinks.ifPresent(GroupPartLinks::close);
    }
  }

  private Handoffs() {}

  /** The node's half: watching its NodeRequests; empty when it cannot. */
  static Optional<NodeRequestWatch> carryOut(
      Optional<KubeApi> api, DriverConfig config, VolumeManager volumes, Map<String, String> env) {
    String namespace = env.getOrDefault(NAMESPACE_ENV, "");
    if (api.isEmpty() || namespace.isEmpty()) {
      return Optional.empty();
    }
    NodeRequestWatch watch =
        new NodeRequestWatch(api.get(), namespace, config.nodeId(), new LocalRequests(volumes));
    watch.start();
    return Optional.of(watch);
  }

  /**
   * Growth through the nodes, unless {@code --immediate-growth=false} leaves every growth to the
   * kubelet's NodeExpandVolume.
   */
  private static Optional<ClusterControllerService.VolumeExpander> expander(
      DriverConfig config, VolumeOwners owners, NodeRequestClient client, KubeApi api) {
    if (!config.immediateGrowth()) {
      LoggerFactory.getLogger(Handoffs.class)
          .info("--immediate-growth=false: the kubelet grows every volume (NodeExpandVolume)");
      return Optional.empty();
    }
    return Optional.of(new RemoteExpand(owners, client, RemoteExpand.Nodes.of(api)));
  }

  /**
   * The controller's half; nothing without API server access or the namespace. With the data path's
   * credentials ({@code tls}, or null) and {@value ReportIdentity#ENV}, a group whose volumes are
   * on several nodes is taken through the nodes' data ports; without, it is refused as before.
   */
  static Controller route(DriverConfig config, DataTls tls, Map<String, String> env) {
    String namespace = env.getOrDefault(NAMESPACE_ENV, "");
    Optional<KubeApi> api;
    try {
      api = namespace.isEmpty() ? Optional.empty() : KubeApi.fromEnvironment(env);
    } catch (IOException e) {
      LoggerFactory.getLogger(Handoffs.class)
          .warn(
              "no API server access, so growth goes through the kubelet and ModifyVolume and group"
                  + " snapshots are not offered: {}",
              e.getMessage());
      return Controller.NONE;
    }
    if (api.isEmpty()) {
      return Controller.NONE;
    }
    VolumeOwners owners = new VolumeOwners(api.get(), config.driverName(), Topology.NODE_KEY);
    owners.start();
    NodeRequestClient client = new NodeRequestClient(api.get(), namespace);
    Optional<ClusterControllerService.VolumeExpander> expander =
        expander(config, owners, client, api.get());
    Optional<ClusterControllerService.VolumeModifier> modifier =
        Optional.of(new RemoteModify(owners, client));
    String snapshotter = env.getOrDefault(GROUP_SNAPSHOTTER_ENV, "");
    if (snapshotter.isEmpty()) {
      return new Controller(expander, modifier, Optional.empty(), List.of(), Optional.empty());
    }
    List<ContentLabeller> labellers =
        List.of(
            new GroupSnapshotContents(api.get(), config.driverName(), snapshotter),
            new GroupSnapshotClasses(api.get(), config.driverName(), snapshotter));
    labellers.forEach(ContentLabeller::start);
    String storageCluster = env.getOrDefault(ReportIdentity.ENV, "").strip();
    if (tls == null || storageCluster.isEmpty()) {
      return new Controller(
          expander,
          modifier,
          Optional.of(new RemoteSnapshots(owners, client)),
          labellers,
          Optional.empty());
    }
    NodeDataEndpoints endpoints = new NodeDataEndpoints(api.get(), storageCluster);
    GroupPartLinks links = new GroupPartLinks(endpoints::of, tls);
    RemoteSnapshots plain = new RemoteSnapshots(owners, client);
    GroupCoordinator coordinator = new GroupCoordinator(links, plain::removePart);
    return new Controller(
        expander,
        modifier,
        Optional.of(new RemoteSnapshots(owners, client, Optional.of(coordinator::take))),
        labellers,
        Optional.of(links));
  }
}
