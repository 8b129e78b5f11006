package dev.soko.operator.reconcile;

import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.operator.model.Names;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Watches every owned kind (selected by Soko's label) so that a hand edit or deletion triggers a
 * reconcile of the StorageCluster named in the object's label.
 */
final class OwnedEventSources {
  private OwnedEventSources() {}

  static List<EventSource<?, StorageCluster>> create(EventSourceContext<StorageCluster> context) {
    List<EventSource<?, StorageCluster>> sources = new ArrayList<>();
    List<Class<? extends HasMetadata>> kinds = new ArrayList<>(OwnedKinds.TYPED);
    kinds.add(Namespace.class);
    for (Class<? extends HasMetadata> kind : kinds) {
      sources.add(source(kind, context));
    }
    return sources;
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
