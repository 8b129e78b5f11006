package dev.soko.driver.client;

import csi.v1.Csi;

/** Builders for the CSI requests the demo, benchmark and end-to-end tests send. */
public final class Requests {
  private Requests() {}

  /** A single-node-writer filesystem capability of the given type ("" lets the driver choose). */
  public static Csi.VolumeCapability mount(String fsType) {
    return Csi.VolumeCapability.newBuilder()
        .setMount(Csi.VolumeCapability.MountVolume.newBuilder().setFsType(fsType))
        .setAccessMode(
            Csi.VolumeCapability.AccessMode.newBuilder()
                .setMode(Csi.VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER))
        .build();
  }

  /** A single-node-writer raw block capability. */
  public static Csi.VolumeCapability block() {
    return Csi.VolumeCapability.newBuilder()
        .setBlock(Csi.VolumeCapability.BlockVolume.getDefaultInstance())
        .setAccessMode(
            Csi.VolumeCapability.AccessMode.newBuilder()
                .setMode(Csi.VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER))
        .build();
  }

  public static Csi.CreateVolumeRequest createVolume(
      String name, long bytes, Csi.VolumeCapability capability) {
    return Csi.CreateVolumeRequest.newBuilder()
        .setName(name)
        .setCapacityRange(Csi.CapacityRange.newBuilder().setRequiredBytes(bytes))
        .addVolumeCapabilities(capability)
        .build();
  }

  public static Csi.CreateVolumeRequest restoreVolume(
      String name, long bytes, Csi.VolumeCapability capability, String snapshotId) {
    return createVolume(name, bytes, capability).toBuilder()
        .setVolumeContentSource(
            Csi.VolumeContentSource.newBuilder()
                .setSnapshot(
                    Csi.VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(snapshotId)))
        .build();
  }

  public static Csi.CreateVolumeRequest cloneVolume(
      String name, long bytes, Csi.VolumeCapability capability, String sourceVolumeId) {
    return createVolume(name, bytes, capability).toBuilder()
        .setVolumeContentSource(
            Csi.VolumeContentSource.newBuilder()
                .setVolume(
                    Csi.VolumeContentSource.VolumeSource.newBuilder().setVolumeId(sourceVolumeId)))
        .build();
  }

  public static Csi.NodeStageVolumeRequest stage(
      Csi.Volume volume, String stagingPath, Csi.VolumeCapability capability) {
    return Csi.NodeStageVolumeRequest.newBuilder()
        .setVolumeId(volume.getVolumeId())
        .setStagingTargetPath(stagingPath)
        .setVolumeCapability(capability)
        .putAllPublishContext(java.util.Map.of())
        .putAllVolumeContext(volume.getVolumeContextMap())
        .build();
  }

  public static Csi.NodePublishVolumeRequest publish(
      Csi.Volume volume, String stagingPath, String targetPath, Csi.VolumeCapability capability) {
    Csi.NodePublishVolumeRequest.Builder request =
        Csi.NodePublishVolumeRequest.newBuilder()
            .setVolumeId(volume.getVolumeId())
            .setTargetPath(targetPath)
            .setVolumeCapability(capability)
            .putAllVolumeContext(volume.getVolumeContextMap());
    if (!stagingPath.isEmpty()) {
      request.setStagingTargetPath(stagingPath);
    }
    return request.build();
  }

  public static Csi.NodeUnpublishVolumeRequest unpublish(String volumeId, String targetPath) {
    return Csi.NodeUnpublishVolumeRequest.newBuilder()
        .setVolumeId(volumeId)
        .setTargetPath(targetPath)
        .build();
  }

  public static Csi.NodeUnstageVolumeRequest unstage(String volumeId, String stagingPath) {
    return Csi.NodeUnstageVolumeRequest.newBuilder()
        .setVolumeId(volumeId)
        .setStagingTargetPath(stagingPath)
        .build();
  }

  public static Csi.DeleteVolumeRequest deleteVolume(String volumeId) {
    return Csi.DeleteVolumeRequest.newBuilder().setVolumeId(volumeId).build();
  }

  public static Csi.CreateSnapshotRequest createSnapshot(String name, String sourceVolumeId) {
    return Csi.CreateSnapshotRequest.newBuilder()
        .setName(name)
        .setSourceVolumeId(sourceVolumeId)
        .build();
  }

  public static Csi.DeleteSnapshotRequest deleteSnapshot(String snapshotId) {
    return Csi.DeleteSnapshotRequest.newBuilder().setSnapshotId(snapshotId).build();
  }
}
