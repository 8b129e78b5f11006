package dev.soko.operator.reconcile.kinds;

import io.fabric8.kubernetes.api.model.HasMetadata;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * What the reconcile reads about the cluster, served from the informers the operator runs ({@link
 * InformerCache}); tests pass a hand-written fake.
 */
public interface ClusterCache {
  /** The cached object of a kind, or empty when the informer has not seen it. */
  Optional<HasMetadata> get(Kind kind, String namespace, String name);

  /** Cached objects of a kind that match; empty when the kind is not watched (yet). */
  List<HasMetadata> list(Kind kind, Predicate<HasMetadata> filter);

  /**
   * Cached objects of a kind whose registry index ({@link Kind.Watch#index}) maps to {@code key}.
   */
  List<HasMetadata> indexed(Kind kind, String key);

  /** Whether objects of the kind are cached (an optional kind's informer may not run yet). */
  boolean watches(Kind kind);

  /** Tells the cache what a write returned, so the next reconcile sees it before its event. */
  void written(HasMetadata before, HasMetadata after);
}
