package dev.soko.api.v1alpha1;

/** What happens to the driver when its StorageCluster is deleted while volumes exist. */
public enum UninstallPolicy {
  /**
   * Keep the driver running and the StorageCluster's finalizer until no PV of the driver is left.
   */
  RefuseWhileVolumesExist,
  /** Remove everything; existing PersistentVolumes are left without a driver. */
  Force
}
