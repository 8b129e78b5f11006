package dev.soko.operator.reconcile;

import dev.soko.operator.model.ClusterFacts;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import java.util.List;
import java.util.function.BiPredicate;

/**
 * One entry of the {@link KindRegistry}: a kind the operator creates, observes or reconciles, with
 * the verbs it uses on it.
 *
 * @param gate "group/version/resource" that must be served for the kind to be used; null when the
 *     API is always there
 * @param applyRank lower first; -1 when not owned
 * @param deleteRank lower first on uninstall; -1 when not owned
 * @param labelSelector the informer's label selector; null watches every object of the kind
 * @param reconcilesOnUpdate which updates (new, old) reconcile; null: every update
 */
record Kind(
    Class<? extends HasMetadata> type,
    String apiVersion,
    String kind,
    String plural,
    boolean namespaced,
    String gate,
    Use use,
    int applyRank,
    int deleteRank,
    boolean informer,
    String labelSelector,
    Mapping mapping,
    List<String> verbs,
    BiPredicate<HasMetadata, HasMetadata> reconcilesOnUpdate) {
  String group() {
    int slash = apiVersion.indexOf('/');
    return slash < 0 ? "" : apiVersion.substring(0, slash);
  }

  boolean generic() {
    return type == GenericKubernetesResource.class;
  }

  /** Whether the kind is in use on a cluster with these facts. */
  boolean served(ClusterFacts facts) {
    return gate == null || facts.serves(gate);
  }

  /** The informer's name, which is also how the reconcile finds its cache. */
  String sourceName() {
    return kind;
  }

  /** What the operator does with a kind. */
  enum Use {
    /** The primary resource, watched by JOSDK's controller event source. */
    PRIMARY,
    /** Created, updated and deleted by the operator. */
    OWNED,
    /** Read for the status (and watched when {@link Kind#informer}). */
    OBSERVED
  }

  /** Which StorageClusters an event on an object of the kind reconciles. */
  enum Mapping {
    /** The one named in the object's Soko label. */
    BY_LABEL,
    /** By label; an object without it (someone else's) reconciles those it may concern. */
    BY_LABEL_OR_FOREIGN,
    /** Those whose driver name the object's driver-name label carries. */
    BY_DRIVER_LABEL,
    /** All of them: the object names no StorageCluster (e.g. a CSINode that lost the driver). */
    ALL,
    /** Not watched. */
    NONE
  }
}
