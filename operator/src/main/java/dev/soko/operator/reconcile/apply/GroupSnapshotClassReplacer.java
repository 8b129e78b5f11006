package dev.soko.operator.reconcile.apply;

import dev.soko.operator.model.Names;
import dev.soko.operator.reconcile.kinds.ClusterCache;
import dev.soko.operator.reconcile.kinds.Kind;
import dev.soko.operator.reconcile.kinds.KindRegistry;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Map;

/**
 * A VolumeGroupSnapshotClass's driver, deletionPolicy and parameters are immutable (the CEL rules
 * of its CRD, external-snapshotter client/config/crd @v8.7.0), unlike a VolumeSnapshotClass's. When
 * Soko's group class differs in a field the StorageCluster sets (spec.driver.name or
 * spec.snapshots.deletionPolicy changed), it is deleted so that the following apply recreates it.
 * Group snapshots taken through it keep their contents' own deletion policy. Someone else's class
 * of that name is left alone: the apply reports the API server's refusal. An explicit reconcile
 * step, as {@link CsiDriverReplacer}.
 */
public final class GroupSnapshotClassReplacer {
  private static final String[] IMMUTABLE = {"driver", "deletionPolicy"};

  private final KubernetesClient client;

  public GroupSnapshotClassReplacer(KubernetesClient client) {
    this.client = client;
  }

  /**
   * Returns a description of the changed fields when it deleted the class, else null.
   *
   * @param desired the StorageCluster's VolumeGroupSnapshotClass
   * @param cluster the StorageCluster's name, which Soko's label on the class carries
   */
  public String replaceIfImmutableChanged(
      GenericKubernetesResource desired, String cluster, ClusterCache cache) {
    Kind kind = KindRegistry.VOLUME_GROUP_SNAPSHOT_CLASS;
    HasMetadata cached = cache.get(kind, null, desired.getMetadata().getName()).orElse(null);
    if (!(cached instanceof GenericKubernetesResource actual) || !ours(actual, cluster)) {
      return null;
    }
    String changed = immutableDifferences(desired, actual);
    if (changed.isEmpty()) {
      return null;
    }
    // A class has no finalizers: the delete is done when the call returns.
    client
        .genericKubernetesResources(kind.apiVersion(), kind.kind())
        .withName(actual.getMetadata().getName())
        .delete();
    return changed;
  }

  static String immutableDifferences(
      GenericKubernetesResource want, GenericKubernetesResource have) {
    StringBuilder sb = new StringBuilder();
    for (String field : IMMUTABLE) {
      CsiDriverReplacer.diff(
          sb,
          field,
          want.getAdditionalProperties().get(field),
          have.getAdditionalProperties().get(field));
    }
    return sb.toString();
  }

  /** Whether {@code o} carries Soko's label naming the StorageCluster {@code cluster}. */
  static boolean ours(HasMetadata o, String cluster) {
    Map<String, String> labels = o.getMetadata().getLabels();
    return labels != null && cluster.equals(labels.get(Names.LABEL_CLUSTER));
  }
}
