package dev.soko.operator.reconcile.kinds;

import dev.soko.operator.model.ClusterFacts;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import java.util.List;
import java.util.function.Function;
import java.util.function.UnaryOperator;

/**
 * One entry of the {@link KindRegistry}: a kind the operator creates, observes or reconciles, with
 * the verbs it uses on it and, when it is watched, how.
 *
 * @param gate "group/version/resource" that must be served for the kind to be used; null when the
 *     API is always there
 * @param applyRank lower first; -1 when not owned
 * @param deleteRank lower first on uninstall; -1 when not owned
 * @param watch the kind's informer; null when the operator runs none for it
 * @param bundle what the support bundle collects of the kind; null when it collects none
 */
public record Kind(
    Class<? extends HasMetadata> type,
    String apiVersion,
    String kind,
    String plural,
    boolean namespaced,
    String gate,
    Use use,
    int applyRank,
    int deleteRank,
    Watch watch,
    List<String> verbs,
    Bundle bundle) {
  public String group() {
    int slash = apiVersion.indexOf('/');
    return slash < 0 ? "" : apiVersion.substring(0, slash);
  }

  public boolean generic() {
    return type == GenericKubernetesResource.class;
  }

  boolean informer() {
    return watch != null;
  }

  /** Whether the kind is in use on a cluster with these facts. */
  public boolean served(ClusterFacts facts) {
    return gate == null || facts.serves(gate);
  }

  /** The informer's name, which is also how the reconcile finds its cache. */
  String sourceName() {
    return kind;
  }

  /**
   * How a kind is watched.
   *
   * @param labelSelector null watches every object of the kind
   * @param slim what the cache keeps of each object; null keeps it whole. A kind with one object
   *     per node (or more) keeps only what is read
   * @param index the key of the cache's one index ({@link ClusterCache#indexed}); null: none
   */
  record Watch(
      String labelSelector,
      Mapping mapping,
      Reconciles reconciles,
      UnaryOperator<HasMetadata> slim,
      Function<HasMetadata, String> index) {
    static Watch of(String labelSelector, Mapping mapping) {
      return new Watch(labelSelector, mapping, Reconciles.ANY_CHANGE, null, null);
    }
  }

  /**
   * What the support bundle ({@code support.SupportBundle}) collects of a kind, with the user's
   * credentials rather than the operator's.
   *
   * @param driver for {@link Scope#OF_DRIVERS}: the CSI driver an object names, or null
   */
  public record Bundle(Scope scope, Function<HasMetadata, String> driver) {
    static Bundle of(Scope scope) {
      return new Bundle(scope, null);
    }

    static Bundle ofDrivers(Function<HasMetadata, String> driver) {
      return new Bundle(Scope.OF_DRIVERS, driver);
    }

    /** Which objects of the kind a bundle holds. */
    public enum Scope {
      /** Every object of the kind. */
      ALL,
      /** Those that name the driver of a StorageCluster. */
      OF_DRIVERS,
      /** Those with Soko's managed-by label or the chart's name label. */
      SOKOS,
      /** Every object in the operator's and the StorageClusters' namespaces. */
      IN_NAMESPACES,
      /** The claims bound to the collected PersistentVolumes. */
      CLAIMS_OF_VOLUMES
    }
  }

  /** What the operator does with a kind. */
  enum Use {
    /** The primary resource, watched by JOSDK's controller event source. */
    PRIMARY,
    /** Created, updated and deleted by the operator. */
    OWNED,
    /** Read for the status (and watched when {@link Kind#informer}). */
    OBSERVED,
    /** Not used by the operator; only the support bundle reads it. */
    COLLECTED
  }

  /** Which StorageClusters an event on an object of the kind reconciles. */
  enum Mapping {
    /** The one named in the object's Soko label. */
    BY_LABEL,
    /** By label; an object without it (someone else's) reconciles those it may concern. */
    BY_LABEL_OR_FOREIGN,
    /** Those whose driver name the object's driver-name label carries. */
    BY_DRIVER_LABEL,
    /** Those whose driver provisioned the PersistentVolume. */
    BY_VOLUME_DRIVER,
    /** Those whose driver a VolumeSnapshotContent names ({@code spec.driver}). */
    BY_SNAPSHOT_DRIVER,
    /** All of them: the object names no StorageCluster (e.g. a CSINode that lost the driver). */
    ALL
  }

  /** Which events of a watched kind reconcile; the cache follows every change either way. */
  enum Reconciles {
    ANY_CHANGE,
    /**
     * Nodes (heartbeats update every Node every few seconds) and PersistentVolumes (binding changes
     * nothing a StorageCluster shows): only arrival and deletion matter.
     */
    ADD_OR_DELETE,
    /**
     * StorageNodes: a change of what the status shows ({@link StorageNodeChanges#changesStatus}).
     */
    REPORT_CHANGE
  }
}
