package dev.soko.operator.model;

import java.util.List;
import java.util.Set;

/**
 * What the model needs to know about the cluster beyond the StorageCluster: its version, which API
 * resources are served ("group/version/resource"), default classes the user chose (storage,
 * snapshot and group snapshot classes), and whether the StorageCluster's namespace exists without
 * being Soko's. {@link #offline} is what {@code render} assumes without a cluster.
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
    String foreignDefaultGroupSnapshotClass,
    ForeignNamespace foreignNamespace) {
  public static final String VOLUME_SNAPSHOT_CLASSES =
      "snapshot.storage.k8s.io/v1/volumesnapshotclasses";

  /** The v1 group snapshot API's classes: the gate of the VolumeGroupSnapshotClass Soko owns. */
  public static final String VOLUME_GROUP_SNAPSHOT_CLASSES =
      "groupsnapshot.storage.k8s.io/v1/volumegroupsnapshotclasses";

  /**
   * The v1 group snapshot API, whole: the group CRDs of external-snapshotter v8 (classes, contents
   * and the group snapshots themselves), which the group snapshotter and snapshot-controller use.
   * They are installed apart from the snapshot CRDs.
   */
  public static final List<String> GROUP_SNAPSHOT_APIS =
      List.of(
          VOLUME_GROUP_SNAPSHOT_CLASSES,
          "groupsnapshot.storage.k8s.io/v1/volumegroupsnapshotcontents",
          "groupsnapshot.storage.k8s.io/v1/volumegroupsnapshots");

  /**
   * A namespace Soko did not create.
   *
   * @param podSecurityEnforce its {@code pod-security.kubernetes.io/enforce} label; null when unset
   */
  public record ForeignNamespace(String name, String podSecurityEnforce) {}

  public static ClusterFacts offline(KubernetesVersion version) {
    return new ClusterFacts(version, Set.of(), false, null, null, null, null);
  }

  /** Unknown (offline) counts as served so that render shows the complete installation. */
  public boolean serves(String api) {
    return !servedApisKnown || servedApis.contains(api);
  }

  /**
   * Whether every resource of the v1 group snapshot API is served ({@link #GROUP_SNAPSHOT_APIS}).
   */
  public boolean servesGroupSnapshots() {
    return GROUP_SNAPSHOT_APIS.stream().allMatch(this::serves);
  }
}
