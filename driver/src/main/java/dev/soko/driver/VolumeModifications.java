package dev.soko.driver;

import dev.soko.driver.config.DriverConfig;
import dev.soko.driver.csi.ClusterControllerService;
import dev.soko.driver.csi.Topology;
import dev.soko.driver.handoff.LocalModify;
import dev.soko.driver.handoff.NodeRequestClient;
import dev.soko.driver.handoff.NodeRequestWatch;
import dev.soko.driver.handoff.RemoteModify;
import dev.soko.driver.handoff.VolumeOwners;
import dev.soko.driver.kube.KubeApi;
import dev.soko.driver.volume.VolumeManager;
import java.io.IOException;
import java.util.Map;
import java.util.Optional;
import org.slf4j.LoggerFactory;

/**
 * Wires ModifyVolume's two halves, which meet in NodeRequests in the driver's namespace ({@value
 * #NAMESPACE_ENV}, which the operator sets on both pods): the controller-mode process hands each
 * call to the owning node; each node-mode process carries out its own. Without API server access or
 * the namespace, neither half runs, and the controller does not advertise MODIFY_VOLUME.
 */
final class VolumeModifications {
  static final String NAMESPACE_ENV = "SOKO_NAMESPACE";

  private VolumeModifications() {}

  /** The node's half: watching its NodeRequests; empty when it cannot. */
  static Optional<NodeRequestWatch> carryOut(
      Optional<KubeApi> api, DriverConfig config, VolumeManager volumes, Map<String, String> env) {
    String namespace = env.getOrDefault(NAMESPACE_ENV, "");
    if (api.isEmpty() || namespace.isEmpty()) {
      return Optional.empty();
    }
    NodeRequestWatch watch =
        new NodeRequestWatch(api.get(), namespace, config.nodeId(), new LocalModify(volumes));
    watch.start();
    return Optional.of(watch);
  }

  /** The controller's half; empty without API server access or the namespace. */
  static Optional<ClusterControllerService.VolumeModifier> route(
      DriverConfig config, Map<String, String> env) {
    String namespace = env.getOrDefault(NAMESPACE_ENV, "");
    Optional<KubeApi> api;
    try {
      api = namespace.isEmpty() ? Optional.empty() : KubeApi.fromEnvironment(env);
    } catch (IOException e) {
      LoggerFactory.getLogger(VolumeModifications.class)
          .warn("no API server access, so ModifyVolume is not offered: {}", e.getMessage());
      return Optional.empty();
    }
    if (api.isEmpty()) {
      return Optional.empty();
    }
    VolumeOwners owners = new VolumeOwners(api.get(), config.driverName(), Topology.NODE_KEY);
    owners.start();
    return Optional.of(new RemoteModify(owners, new NodeRequestClient(api.get(), namespace)));
  }
}
