package dev.soko.api.v1alpha1;

/** What a {@link NodeRequest} asks of the node. */
public enum NodeOperation {
  /** Apply a volume's mutable parameters (ControllerModifyVolume, VolumeAttributesClass). */
  ModifyVolume,
  /** Grow a volume, and its filesystem where it is staged (ControllerExpandVolume). */
  ExpandVolume,
  /** Snapshot a volume (CreateSnapshot reaching the controller). */
  CreateSnapshot,
  /** Delete a snapshot the node took for the controller. */
  DeleteSnapshot,
  /** Snapshot several volumes of the node at one instant (CreateVolumeGroupSnapshot). */
  CreateVolumeGroupSnapshot,
  /** Describe a group snapshot (GetVolumeGroupSnapshot, for pre-provisioned groups). */
  GetVolumeGroupSnapshot,
  /** Delete a group snapshot and its members (DeleteVolumeGroupSnapshot). */
  DeleteVolumeGroupSnapshot
}
