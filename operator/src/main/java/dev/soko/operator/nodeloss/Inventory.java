package dev.soko.operator.nodeloss;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import java.util.List;
import java.util.Set;

/**
 * What node-loss handling reads: the Nodes that exist, the PVs of one driver (slimmed by {@link
 * Slim}) and the snapshot contents no Node was given, from the operator's informers.
 */
public interface Inventory {
  Set<String> nodeNames();

  List<PersistentVolume> volumesOf(String driver);

  /** Whether the VolumeSnapshotContent API is served and its informer runs. */
  default boolean snapshotsServed() {
    return false;
  }

  /** The VolumeSnapshotContents without the managed-by label, of every driver. */
  default List<GenericKubernetesResource> unlabelledSnapshotContents() {
    return List.of();
  }
}
