package dev.soko.operator.model;

import java.util.Set;

/**
 * What the model needs to know about the cluster beyond the StorageCluster: its version, which API
 * resources are served ("group/version/resource"), default classes the user chose, and whether the
 * StorageCluster's namespace exists without being Soko's. {@link #offline} is what {@code render}
 * assumes without a cluster.
 *
 * @param foreignNamespace the StorageCluster's namespace when it exists and carries no Soko label
 *     (someone else made it); null when it is absent, Soko's, or unknown
 */
public record ClusterFacts(
    KubernetesVersion version,
    Set<String> servedApis,
    boolean servedApisKnown,
    String foreignDefaultStorageClass,
    String foreignDefaultSnapshotClass,
    ForeignNamespace foreignNamespace) {
  public static final String VOLUME_SNAPSHOT_CLASSES =
      "snapshot.storage.k8s.io/v1/volumesnapshotclasses";

  /**
   * A namespace Soko did not create.
   *
   * @param podSecurityEnforce its {@code pod-security.kubernetes.io/enforce} label; null when unset
   */
  public record ForeignNamespace(String name, String podSecurityEnforce) {}

  public static ClusterFacts offline(KubernetesVersion version) {
    return new ClusterFacts(version, Set.of(), false, null, null, null);
  }

  /** Unknown (offline) counts as served so that render shows the complete installation. */
  public boolean serves(String api) {
    return !servedApisKnown || servedApis.contains(api);
  }
}
