package dev.soko.operator.reconcile.kinds;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;

/**
 * What the registry's VolumeSnapshotContent informer selects and maps by: the label a node's
 * csi-snapshotter takes a content by, and the CSI driver a content names.
 */
public final class SnapshotContents {
  /** The label csi-snapshotter's node deployment selects its contents by (external-snapshotter). */
  public static final String MANAGED_BY = "snapshot.storage.kubernetes.io/managed-by";

  private SnapshotContents() {}

  /** The CSI driver a VolumeSnapshotContent names, or null. */
  public static String driver(HasMetadata content) {
    return content instanceof GenericKubernetesResource g
            && g.get("spec", "driver") instanceof String name
        ? name
        : null;
  }
}
