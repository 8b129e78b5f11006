package dev.soko.operator.nodeloss;

import dev.soko.api.v1alpha1.StorageCluster;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Informers on Nodes (names only) and PersistentVolumes (the fields node-loss reads, indexed by CSI
 * driver). A Node added or deleted reconciles every StorageCluster; a PV deleted reconciles the
 * StorageClusters of its driver, so a report clears when someone deletes an orphan by hand. Node
 * and PV updates (heartbeats, binding) reconcile nothing.
 */
final class NodeLossSources implements Inventory {
  static final String NODES = "NodeLossNodes";
  static final String VOLUMES = "NodeLossVolumes";
  private static final String BY_DRIVER = "csiDriver";
  private static final long PAGE = 500;

  private InformerEventSource<Node, StorageCluster> nodes;
  private InformerEventSource<PersistentVolume, StorageCluster> volumes;

  List<EventSource<?, StorageCluster>> create(EventSourceContext<StorageCluster> context) {
    nodes =
        new InformerEventSource<>(
            InformerEventSourceConfiguration.from(Node.class, StorageCluster.class)
                .withName(NODES)
                .withItemStore(new SlimStore<>(Slim::node))
                .withInformerListLimit(PAGE)
                .withOnUpdateFilter((now, before) -> false)
                .withSecondaryToPrimaryMapper(node -> all(context))
                .build(),
            context);
    volumes =
        new InformerEventSource<>(
            InformerEventSourceConfiguration.from(PersistentVolume.class, StorageCluster.class)
                .withName(VOLUMES)
                .withItemStore(new SlimStore<>(Slim::volume))
                .withInformerListLimit(PAGE)
                .withOnAddFilter(pv -> false)
                .withOnUpdateFilter((now, before) -> false)
                .withOnDeleteFilter((pv, unknown) -> driver(pv) != null)
                .withSecondaryToPrimaryMapper(pv -> ofDriver(context, driver(pv)))
                .build(),
            context);
    volumes.addIndexers(
        Map.of(BY_DRIVER, pv -> driver(pv) == null ? List.of() : List.of(driver(pv))));
    return List.of(nodes, volumes);
  }

  @Override
  public Set<String> nodeNames() {
    return nodes.keys().map(ResourceID::getName).collect(Collectors.toSet());
  }

  @Override
  public List<PersistentVolume> volumesOf(String driver) {
    return volumes.byIndex(BY_DRIVER, driver);
  }

  private static String driver(PersistentVolume pv) {
    return pv.getSpec() == null || pv.getSpec().getCsi() == null
        ? null
        : pv.getSpec().getCsi().getDriver();
  }

  private static Set<ResourceID> all(EventSourceContext<StorageCluster> context) {
    return context
        .getPrimaryCache()
        .list()
        .map(ResourceID::fromResource)
        .collect(Collectors.toSet());
  }

  private static Set<ResourceID> ofDriver(EventSourceContext<StorageCluster> context, String d) {
    return context
        .getPrimaryCache()
        .list(sc -> d != null && d.equals(sc.getSpec().getDriver().getName()))
        .map(ResourceID::fromResource)
        .collect(Collectors.toSet());
  }
}
