package dev.soko.operator.reconcile.kinds;

import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.api.v1alpha1.StorageNode;
import dev.soko.operator.model.Names;
import dev.soko.operator.nodeloss.Slim;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PersistentVolume;
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
 * One informer per watched kind of the {@link KindRegistry}, and no informer anywhere else: a hand
 * edit or deletion of an owned object, a CSINode registration, a capacity change, a node plugin
 * pod's readiness, a Node that arrives or goes or a PV deleted reconciles the StorageClusters it
 * concerns, and the reconcile reads these caches instead of the API server. Informers of optional
 * kinds start once their API is served ({@link InformerCache#follow}).
 */
public final class OwnedEventSources {
  /** The index of a kind whose registry entry declares one ({@link Kind.Watch#index}). */
  static final String INDEX = "registry-index";

  /** Initial lists come in pages: a 1,000-node cluster's Nodes or Pods are no single response. */
  private static final long PAGE = 500;

  private OwnedEventSources() {}

  public static List<EventSource<?, StorageCluster>> create(
      EventSourceContext<StorageCluster> context) {
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
    Kind.Watch watch = kind.watch();
    builder
        .withName(kind.sourceName())
        .withSecondaryToPrimaryMapper(mapper(kind, context))
        .withInformerListLimit(PAGE);
    if (watch.slim() != null) {
      builder.withItemStore(new SlimStore<>(watch.slim()));
    }
    if (watch.labelSelector() != null) {
      builder.withLabelSelector(watch.labelSelector());
    }
    if (kind.namespaced()) {
      builder.withWatchAllNamespaces();
    }
    switch (watch.reconciles()) {
      case ANY_CHANGE -> {}
      case ADD_OR_DELETE -> builder.withOnUpdateFilter((now, before) -> false);
      case REPORT_CHANGE ->
          builder.withOnUpdateFilter(
              (now, before) ->
                  StorageNodeChanges.changesStatus((StorageNode) now, (StorageNode) before));
    }
    InformerEventSource<HasMetadata, StorageCluster> source =
        new InformerEventSource<>(builder.build(), context);
    if (watch.index() != null) {
      source.addIndexers(
          Map.of(
              INDEX,
              o -> {
                String key = watch.index().apply(o);
                return key == null ? List.of() : List.of(key);
              }));
    }
    return source;
  }

  private static SecondaryToPrimaryMapper<HasMetadata> mapper(
      Kind kind, EventSourceContext<StorageCluster> context) {
    return switch (kind.watch().mapping()) {
      case BY_LABEL -> r -> byLabel(r);
      case BY_LABEL_OR_FOREIGN ->
          // Someone else's CSIDriver or default class changes what a StorageCluster may do.
          r -> label(r, Names.LABEL_CLUSTER) == null ? all(context) : byLabel(r);
      case BY_DRIVER_LABEL -> r -> ofDriver(context, label(r, KindRegistry.DRIVER_NAME_LABEL));
      case BY_VOLUME_DRIVER -> r -> ofDriver(context, Slim.driver((PersistentVolume) r));
      case BY_SNAPSHOT_DRIVER -> r -> ofDriver(context, SnapshotContents.driver(r));
      // An update that removes a driver from a CSINode no longer names it: every StorageCluster.
      case ALL -> r -> all(context);
    };
  }

  private static Set<ResourceID> ofDriver(
      EventSourceContext<StorageCluster> context, String driver) {
    return context
        .getPrimaryCache()
        .list(
            sc ->
                driver != null
                    && sc.getSpec() != null
                    && driver.equals(sc.getSpec().getDriver().getName()))
        .map(ResourceID::fromResource)
        .collect(Collectors.toSet());
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
