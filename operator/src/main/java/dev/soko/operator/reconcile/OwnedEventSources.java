package dev.soko.operator.reconcile;

import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.operator.model.Names;
import dev.soko.operator.nodeloss.SlimStore;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.processing.GroupVersionKind;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.SecondaryToPrimaryMapper;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * One informer per watched kind of the {@link KindRegistry}: a hand edit or deletion of an owned
 * object, a CSINode registration, a capacity change or a node plugin pod's readiness reconciles the
 * StorageClusters it concerns, and the reconcile reads these caches instead of the API server.
 * Informers of optional kinds start once their API is served ({@link InformerCache#follow}).
 */
final class OwnedEventSources {
  private OwnedEventSources() {}

  static List<EventSource<?, StorageCluster>> create(EventSourceContext<StorageCluster> context) {
    return KindRegistry.informers().stream()
        .filter(k -> k.gate() == null)
        .<EventSource<?, StorageCluster>>map(k -> source(k, context))
        .toList();
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  static EventSource<?, StorageCluster> source(
      Kind kind, EventSourceContext<StorageCluster> context) {
    InformerEventSourceConfiguration.Builder builder =
        kind.generic()
            ? InformerEventSourceConfiguration.from(
                new GroupVersionKind(kind.apiVersion(), kind.kind()), StorageCluster.class)
            : InformerEventSourceConfiguration.from(kind.type(), StorageCluster.class);
    builder.withName(kind.sourceName()).withSecondaryToPrimaryMapper(mapper(kind, context));
    if (kind == KindRegistry.POD) {
      // One per node: the cache keeps only what readiness reads.
      builder.withItemStore(new SlimStore<Pod>(CachedPod::of));
    }
    if (kind.labelSelector() != null) {
      builder.withLabelSelector(kind.labelSelector());
    }
    if (kind.namespaced()) {
      builder.withWatchAllNamespaces();
    }
    return new InformerEventSource<>(builder.build(), context);
  }

  private static SecondaryToPrimaryMapper<HasMetadata> mapper(
      Kind kind, EventSourceContext<StorageCluster> context) {
    return switch (kind.mapping()) {
      case BY_LABEL -> r -> byLabel(r);
      case BY_LABEL_OR_FOREIGN ->
          // Someone else's CSIDriver or default class changes what a StorageCluster may do.
          r -> label(r, Names.LABEL_CLUSTER) == null ? all(context) : byLabel(r);
      case BY_DRIVER_LABEL ->
          r -> {
            String driver = label(r, KindRegistry.DRIVER_NAME_LABEL);
            return context
                .getPrimaryCache()
                .list(sc -> driver != null && driver.equals(sc.getSpec().getDriver().getName()))
                .map(ResourceID::fromResource)
                .collect(Collectors.toSet());
          };
      // An update that removes a driver from a CSINode no longer names it: every StorageCluster.
      case ALL -> r -> all(context);
      case NONE -> r -> Set.of();
    };
  }

  private static Set<ResourceID> byLabel(HasMetadata r) {
    String cluster = label(r, Names.LABEL_CLUSTER);
    return cluster == null ? Set.of() : Set.of(new ResourceID(cluster));
  }

  private static String label(HasMetadata r, String key) {
    Map<String, String> labels = r.getMetadata().getLabels();
    return labels == null ? null : labels.get(key);
  }

  private static Set<ResourceID> all(EventSourceContext<StorageCluster> context) {
    return context
        .getPrimaryCache()
        .list()
        .map(ResourceID::fromResource)
        .collect(Collectors.toSet());
  }
}
