package dev.soko.operator.reconcile;

import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.operator.model.Names;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.storage.CSINode;
import io.fabric8.kubernetes.api.model.storage.CSIStorageCapacity;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Watches every owned kind (selected by Soko's label) so that a hand edit or deletion triggers a
 * reconcile of the StorageCluster named in the object's label; and CSINode and CSIStorageCapacity,
 * which the status reports.
 */
final class OwnedEventSources {
  /** Label the external-provisioner puts on its CSIStorageCapacity objects. */
  static final String DRIVER_NAME_LABEL = "csi.storage.k8s.io/drivername";

  private OwnedEventSources() {}

  static List<EventSource<?, StorageCluster>> create(EventSourceContext<StorageCluster> context) {
    List<EventSource<?, StorageCluster>> sources = new ArrayList<>();
    List<Class<? extends HasMetadata>> kinds = new ArrayList<>(OwnedKinds.TYPED);
    kinds.add(Namespace.class);
    for (Class<? extends HasMetadata> kind : kinds) {
      sources.add(source(kind, context));
    }
    sources.add(csiNodes(context));
    sources.add(storageCapacities(context));
    return sources;
  }

  /**
   * CSINode objects change when kubelet registers or unregisters a driver on a node: every
   * StorageCluster is reconciled so that status.nodes.registered follows at once. All of them,
   * because an update that removes a driver no longer names it, and CSINodes change rarely.
   */
  private static EventSource<CSINode, StorageCluster> csiNodes(
      EventSourceContext<StorageCluster> context) {
    var config =
        InformerEventSourceConfiguration.from(CSINode.class, StorageCluster.class)
            .withName("CSINode")
            .withSecondaryToPrimaryMapper(node -> allPrimaries(context))
            .build();
    return new InformerEventSource<>(config, context);
  }

  /**
   * The external-provisioner labels the CSIStorageCapacity objects it publishes with the driver
   * name; a change reconciles the StorageClusters of that driver, so pool capacity in status is
   * current without waiting for the periodic resync.
   */
  private static EventSource<CSIStorageCapacity, StorageCluster> storageCapacities(
      EventSourceContext<StorageCluster> context) {
    var config =
        InformerEventSourceConfiguration.from(CSIStorageCapacity.class, StorageCluster.class)
            .withName("CSIStorageCapacity")
            .withLabelSelector(DRIVER_NAME_LABEL)
            .withWatchAllNamespaces()
            .withSecondaryToPrimaryMapper(
                capacity -> {
                  String driver = capacity.getMetadata().getLabels().get(DRIVER_NAME_LABEL);
                  return context
                      .getPrimaryCache()
                      .list(
                          sc -> driver != null && driver.equals(sc.getSpec().getDriver().getName()))
                      .map(ResourceID::fromResource)
                      .collect(Collectors.toSet());
                })
            .build();
    return new InformerEventSource<>(config, context);
  }

  private static Set<ResourceID> allPrimaries(EventSourceContext<StorageCluster> context) {
    return context
        .getPrimaryCache()
        .list()
        .map(ResourceID::fromResource)
        .collect(Collectors.toSet());
  }

  private static <R extends HasMetadata> EventSource<R, StorageCluster> source(
      Class<R> kind, EventSourceContext<StorageCluster> context) {
    var config =
        InformerEventSourceConfiguration.from(kind, StorageCluster.class)
            .withName(kind.getSimpleName())
            .withLabelSelector(Names.LABEL_CLUSTER)
            .withWatchAllNamespaces()
            .withSecondaryToPrimaryMapper(
                r -> {
                  String cluster = r.getMetadata().getLabels().get(Names.LABEL_CLUSTER);
                  return cluster == null ? Set.of() : Set.of(new ResourceID(cluster));
                })
            .build();
    return new InformerEventSource<>(config, context);
  }
}
