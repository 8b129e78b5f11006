package dev.soko.operator.reconcile.kinds;

import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.operator.model.ClusterFacts;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.javaoperatorsdk.operator.processing.event.EventSourceRetriever;
import io.javaoperatorsdk.operator.processing.event.NoEventSourceForClassException;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * {@link ClusterCache} over the informer event sources of the registry's kinds. An optional kind's
 * informer is registered when discovery first shows its API served.
 */
public final class InformerCache implements ClusterCache {
  private final EventSourceRetriever<StorageCluster> sources;

  public InformerCache(EventSourceRetriever<StorageCluster> sources) {
    this.sources = sources;
  }

  /** Starts the informers of optional kinds whose API the cluster now serves. */
  public void follow(ClusterFacts facts) {
    for (Kind kind : KindRegistry.informers()) {
      if (kind.gate() != null && kind.served(facts) && !watches(kind)) {
        sources.dynamicallyRegisterEventSource(
            OwnedEventSources.source(kind, sources.eventSourceContextForDynamicRegistration()));
      }
    }
  }

  @Override
  public Optional<HasMetadata> get(Kind kind, String namespace, String name) {
    return source(kind).flatMap(s -> s.get(id(kind, namespace, name)));
  }

  @Override
  public List<HasMetadata> list(Kind kind, Predicate<HasMetadata> filter) {
    return source(kind).map(s -> s.list(filter::test).toList()).orElse(List.of());
  }

  @Override
  public List<HasMetadata> indexed(Kind kind, String key) {
    return source(kind).map(s -> s.byIndex(OwnedEventSources.INDEX, key)).orElse(List.of());
  }

  @Override
  public boolean watches(Kind kind) {
    return source(kind).isPresent();
  }

  @Override
  public void written(HasMetadata before, HasMetadata after) {
    if (after == null) {
      return;
    }
    Kind kind = KindRegistry.of(after);
    source(kind)
        .ifPresent(
            s -> {
              ResourceID id =
                  id(kind, after.getMetadata().getNamespace(), after.getMetadata().getName());
              if (before == null) {
                s.handleRecentResourceCreate(id, after);
              } else {
                s.handleRecentResourceUpdate(id, after, before);
              }
            });
  }

  private static ResourceID id(Kind kind, String namespace, String name) {
    return kind.namespaced() ? new ResourceID(name, namespace) : new ResourceID(name);
  }

  @SuppressWarnings("unchecked")
  private Optional<InformerEventSource<HasMetadata, StorageCluster>> source(Kind kind) {
    try {
      EventSource<?, StorageCluster> s =
          sources.getEventSourceFor((Class<Object>) (Class<?>) kind.type(), kind.sourceName());
      return Optional.of((InformerEventSource<HasMetadata, StorageCluster>) s);
    } catch (NoEventSourceForClassException | IllegalArgumentException e) {
      return Optional.empty();
    }
  }
}
