package dev.soko.api.v1alpha1;

/** What a {@link NodeRequest} asks of the node. */
public enum NodeOperation {
  /** Apply a volume's mutable parameters (ControllerModifyVolume, VolumeAttributesClass). */
  ModifyVolume
}
