package dev.soko.operator.model;

import java.util.Set;

/**
 * What the model needs to know about the cluster beyond the StorageCluster: its version, which API
 * resources are served ("group/version/resource"), and default classes the user chose. {@link
 * #offline} is what {@code render} assumes without a cluster.
 */
public record ClusterFacts(
    KubernetesVersion version,
    Set<String> servedApis,
    boolean servedApisKnown,
    String foreignDefaultStorageClass,
    String foreignDefaultSnapshotClass) {
  public static final String VOLUME_SNAPSHOT_CLASSES =
      "snapshot.storage.k8s.io/v1/volumesnapshotclasses";

  public static ClusterFacts offline(KubernetesVersion version) {
    return new ClusterFacts(version, Set.of(), false, null, null);
  }

  /** Unknown (offline) counts as served so that render shows the complete installation. */
  public boolean serves(String api) {
    return !servedApisKnown || servedApis.contains(api);
  }
}
