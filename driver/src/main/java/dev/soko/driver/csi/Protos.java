package dev.soko.driver.csi;

import com.google.protobuf.Timestamp;
import csi.v1.Csi;
import dev.soko.driver.model.ContentSource;
import dev.soko.driver.model.GroupSnapshot;
import dev.soko.driver.model.Snapshot;
import dev.soko.driver.model.Volume;
import dev.soko.driver.model.VolumeCondition;
import java.time.Instant;

/** Engine values to CSI messages, in one place so every RPC answers alike. */
final class Protos {
  /** volume_context key naming the pool; the node side reads nothing else from the context. */
  static final String CONTEXT_POOL = "soko.dev/pool";

  private Protos() {}

  static Csi.Volume volume(Volume volume, Topology topology) {
    Csi.Volume.Builder builder =
        Csi.Volume.newBuilder()
            .setVolumeId(volume.id())
            .setCapacityBytes(volume.capacityBytes())
            .putVolumeContext(CONTEXT_POOL, volume.pool())
            .addAccessibleTopology(topology.segment());
    Csi.VolumeContentSource source = contentSource(volume.source());
    if (source != null) {
      builder.setContentSource(source);
    }
    return builder.build();
  }

  static Csi.VolumeContentSource contentSource(ContentSource source) {
    if (source instanceof ContentSource.FromSnapshot snapshot) {
      return Csi.VolumeContentSource.newBuilder()
          .setSnapshot(
              Csi.VolumeContentSource.SnapshotSource.newBuilder()
                  .setSnapshotId(snapshot.snapshotId()))
          .build();
    }
    if (source instanceof ContentSource.FromVolume clone) {
      return Csi.VolumeContentSource.newBuilder()
          .setVolume(
              Csi.VolumeContentSource.VolumeSource.newBuilder().setVolumeId(clone.volumeId()))
          .build();
    }
    return null;
  }

  static Csi.Snapshot snapshot(Snapshot snapshot, GroupIds groupIds) {
    return Csi.Snapshot.newBuilder()
        .setSnapshotId(snapshot.id())
        .setSourceVolumeId(snapshot.sourceVolumeId())
        .setSizeBytes(snapshot.sizeBytes())
        .setCreationTime(timestamp(snapshot.createdAt()))
        .setReadyToUse(snapshot.readyToUse())
        .setGroupSnapshotId(groupIds.shown(snapshot.groupSnapshotId()))
        .build();
  }

  static Csi.VolumeGroupSnapshot groupSnapshot(GroupSnapshot group, GroupIds groupIds) {
    Csi.VolumeGroupSnapshot.Builder builder =
        Csi.VolumeGroupSnapshot.newBuilder()
            .setGroupSnapshotId(groupIds.shown(group.id()))
            .setCreationTime(timestamp(group.createdAt()))
            .setReadyToUse(group.readyToUse());
    group.members().forEach(member -> builder.addSnapshots(snapshot(member, groupIds)));
    return builder.build();
  }

  static Csi.VolumeCondition condition(VolumeCondition condition) {
    return Csi.VolumeCondition.newBuilder()
        .setAbnormal(condition.abnormal())
        .setMessage(condition.message())
        .build();
  }

  static Timestamp timestamp(Instant instant) {
    return Timestamp.newBuilder()
        .setSeconds(instant.getEpochSecond())
        .setNanos(instant.getNano())
        .build();
  }
}
