package dev.soko.driver.testing;

import csi.v1.Csi.VolumeCapability;
import csi.v1.Csi.VolumeCapability.AccessMode;

/** Capability builders for tests. */
public final class Caps {
  private Caps() {}

  public static VolumeCapability mount(String fsType, String... flags) {
    return VolumeCapability.newBuilder()
        .setAccessMode(AccessMode.newBuilder().setMode(AccessMode.Mode.SINGLE_NODE_WRITER))
        .setMount(
            VolumeCapability.MountVolume.newBuilder()
                .setFsType(fsType)
                .addAllMountFlags(java.util.List.of(flags)))
        .build();
  }

  public static VolumeCapability block() {
    return VolumeCapability.newBuilder()
        .setAccessMode(AccessMode.newBuilder().setMode(AccessMode.Mode.SINGLE_NODE_WRITER))
        .setBlock(VolumeCapability.BlockVolume.getDefaultInstance())
        .build();
  }

  public static VolumeCapability withMode(VolumeCapability capability, AccessMode.Mode mode) {
    return capability.toBuilder().setAccessMode(AccessMode.newBuilder().setMode(mode)).build();
  }
}
