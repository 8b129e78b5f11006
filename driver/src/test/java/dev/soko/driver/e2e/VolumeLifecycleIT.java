package dev.soko.driver.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import csi.v1.Csi;
import dev.soko.driver.client.CsiClient;
import dev.soko.driver.client.Requests;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * One volume's whole life through the real jar, over the Unix socket, on real loop devices and
 * mounts: create, stage, publish, write, snapshot, restore into a new volume, verify the data,
 * expand online, clean up, and prove nothing is left on the host. Needs root and fails without it.
 */
class VolumeLifecycleIT {
  private static final long MIB = 1024 * 1024;

  /**
   * XFS, because growing ext4 online needs CAP_SYS_RESOURCE, which root in some sandboxes (this
   * project's CI containers among them) lacks; xfs_growfs needs only CAP_SYS_ADMIN. XFS also
   * exercises the duplicate-UUID case: the restored copy is mounted beside its source.
   */
  private static final Csi.VolumeCapability XFS = Requests.mount("xfs");

  /** mkfs.xfs refuses filesystems under 300 MiB. */
  private static final long SIZE = 320 * MIB;

  private static final long GROWN = 400 * MIB;

  private Path root;
  private DriverJar driver;
  private CsiClient csi;

  @BeforeEach
  void start() throws Exception {
    root = Files.createTempDirectory("soko-life-");
    driver = new DriverJar(root);
    csi = driver.start();
  }

  @AfterEach
  void stop() throws Exception {
    driver.close();
    HostState.release(root);
  }

  @Test
  void createStagePublishWriteSnapshotRestoreVerifyExpandCleanUp() throws Exception {
    Csi.Volume source =
        csi.controller().createVolume(Requests.createVolume("life-src", SIZE, XFS)).getVolume();
    assertThat(source.getCapacityBytes()).isGreaterThanOrEqualTo(SIZE);
    assertThat(source.getAccessibleTopology(0).getSegmentsMap())
        .containsEntry("topology.soko.dev/node", "it-node");

    String staging = driver.mounts.resolve("staging/src").toString();
    Path target = driver.mounts.resolve("pods/src/mount");
    csi.node().nodeStageVolume(Requests.stage(source, staging, XFS));
    csi.node().nodePublishVolume(Requests.publish(source, staging, target.toString(), XFS));
    assertThat(HostState.mountsUnder(root)).contains(target.toString(), staging);

    byte[] data = new byte[3 * (int) MIB];
    new Random(7).nextBytes(data);
    Files.write(target.resolve("data.bin"), data);
    new ProcessBuilder("sync").start().waitFor();

    Csi.Snapshot snapshot =
        csi.controller()
            .createSnapshot(Requests.createSnapshot("life-snap", source.getVolumeId()))
            .getSnapshot();
    assertThat(snapshot.getReadyToUse()).isTrue();
    assertThat(snapshot.getSourceVolumeId()).isEqualTo(source.getVolumeId());

    // Changes after the snapshot must not reach the restored volume.
    Files.writeString(target.resolve("later.txt"), "written after the snapshot");

    Csi.Volume restored =
        csi.controller()
            .createVolume(
                Requests.restoreVolume("life-restored", SIZE, XFS, snapshot.getSnapshotId()))
            .getVolume();
    assertThat(restored.getContentSource().getSnapshot().getSnapshotId())
        .isEqualTo(snapshot.getSnapshotId());
    String restoredStaging = driver.mounts.resolve("staging/restored").toString();
    Path restoredTarget = driver.mounts.resolve("pods/restored/mount");
    csi.node().nodeStageVolume(Requests.stage(restored, restoredStaging, XFS));
    csi.node()
        .nodePublishVolume(
            Requests.publish(restored, restoredStaging, restoredTarget.toString(), XFS));
    assertThat(Files.readAllBytes(restoredTarget.resolve("data.bin"))).isEqualTo(data);
    assertThat(restoredTarget.resolve("later.txt")).doesNotExist();

    Csi.ControllerExpandVolumeResponse controllerExpand =
        csi.controller()
            .controllerExpandVolume(
                Csi.ControllerExpandVolumeRequest.newBuilder()
                    .setVolumeId(source.getVolumeId())
                    .setCapacityRange(Csi.CapacityRange.newBuilder().setRequiredBytes(GROWN))
                    .build());
    assertThat(controllerExpand.getNodeExpansionRequired()).isTrue();
    long grown =
        csi.node()
            .nodeExpandVolume(
                Csi.NodeExpandVolumeRequest.newBuilder()
                    .setVolumeId(source.getVolumeId())
                    .setVolumePath(target.toString())
                    .setStagingTargetPath(staging)
                    .setCapacityRange(Csi.CapacityRange.newBuilder().setRequiredBytes(GROWN))
                    .build())
            .getCapacityBytes();
    assertThat(grown).isGreaterThanOrEqualTo(GROWN);
    Csi.NodeGetVolumeStatsResponse stats =
        csi.node()
            .nodeGetVolumeStats(
                Csi.NodeGetVolumeStatsRequest.newBuilder()
                    .setVolumeId(source.getVolumeId())
                    .setVolumePath(target.toString())
                    .build());
    Csi.VolumeUsage bytes = stats.getUsage(0);
    assertThat(bytes.getUnit()).isEqualTo(Csi.VolumeUsage.Unit.BYTES);
    assertThat(bytes.getTotal()).as("filesystem grew online").isGreaterThan(SIZE);
    assertThat(bytes.getUsed()).isGreaterThanOrEqualTo(3 * MIB);
    assertThat(stats.getVolumeCondition().getAbnormal()).isFalse();
    assertThat(Files.readAllBytes(target.resolve("data.bin"))).isEqualTo(data);

    // Bad input over the real socket gets a precise code and touches nothing.
    StatusRuntimeException traversal =
        catchThrowableOfType(
            StatusRuntimeException.class,
            () ->
                csi.node()
                    .nodePublishVolume(
                        Requests.publish(source, staging, driver.mounts + "/../../etc", XFS)));
    assertThat(traversal.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    // IDs are lookup keys, never paths: a traversal ID is simply unknown, and deleting it is the
    // spec's idempotent no-op that must leave the real volume alone.
    String hostileId = "../../" + source.getVolumeId();
    csi.controller().deleteVolume(Requests.deleteVolume(hostileId));
    StatusRuntimeException unknown =
        catchThrowableOfType(
            StatusRuntimeException.class,
            () ->
                csi.controller()
                    .controllerGetVolume(
                        Csi.ControllerGetVolumeRequest.newBuilder()
                            .setVolumeId(hostileId)
                            .build()));
    assertThat(unknown.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND);
    StatusRuntimeException oversized =
        catchThrowableOfType(
            StatusRuntimeException.class,
            () -> csi.controller().deleteVolume(Requests.deleteVolume("v".repeat(10_000))));
    assertThat(oversized.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(Files.readAllBytes(target.resolve("data.bin"))).isEqualTo(data);

    csi.node()
        .nodeUnpublishVolume(Requests.unpublish(restored.getVolumeId(), restoredTarget.toString()));
    csi.node().nodeUnstageVolume(Requests.unstage(restored.getVolumeId(), restoredStaging));
    csi.node().nodeUnpublishVolume(Requests.unpublish(source.getVolumeId(), target.toString()));
    csi.node().nodeUnstageVolume(Requests.unstage(source.getVolumeId(), staging));
    csi.controller().deleteSnapshot(Requests.deleteSnapshot(snapshot.getSnapshotId()));
    csi.controller().deleteVolume(Requests.deleteVolume(restored.getVolumeId()));
    csi.controller().deleteVolume(Requests.deleteVolume(source.getVolumeId()));

    assertThat(
            csi.controller()
                .listVolumes(Csi.ListVolumesRequest.getDefaultInstance())
                .getEntriesList())
        .isEmpty();
    assertThat(
            csi.controller()
                .listSnapshots(Csi.ListSnapshotsRequest.getDefaultInstance())
                .getEntriesList())
        .isEmpty();
    assertThat(HostState.mountsUnder(root)).isEmpty();
    assertThat(HostState.loopDevicesUnder(root)).isEmpty();
  }

  /**
   * Kubernetes refuses a restore claim smaller than the snapshot's size. A 1Mi ext4 claim gets 16
   * MiB and a 64Mi xfs claim 300 MiB; their snapshots report the 1Mi and 64Mi asked for, and a
   * restore into a claim of that request gets the source's capacity and its files.
   */
  @Test
  void aSnapshotOfASmallVolumeRestoresIntoAClaimOfTheOriginalRequest() throws Exception {
    record Case(String fsType, long asked, long capacity) {}
    for (Case c : List.of(new Case("ext4", MIB, 16 * MIB), new Case("xfs", 64 * MIB, 300 * MIB))) {
      Csi.VolumeCapability capability = Requests.mount(c.fsType());
      Csi.Volume source =
          csi.controller()
              .createVolume(Requests.createVolume("small-" + c.fsType(), c.asked(), capability))
              .getVolume();
      assertThat(source.getCapacityBytes()).isEqualTo(c.capacity());
      Path sourceDir = mount(source, capability);
      Files.writeString(sourceDir.resolve("data"), "on " + c.fsType());
      new ProcessBuilder("sync").start().waitFor();

      Csi.Snapshot snapshot =
          csi.controller()
              .createSnapshot(
                  Requests.createSnapshot("small-snap-" + c.fsType(), source.getVolumeId()))
              .getSnapshot();
      assertThat(snapshot.getSizeBytes()).as(c.fsType()).isEqualTo(c.asked());
      assertThat(
              csi.controller()
                  .listSnapshots(
                      Csi.ListSnapshotsRequest.newBuilder()
                          .setSourceVolumeId(source.getVolumeId())
                          .build())
                  .getEntries(0)
                  .getSnapshot()
                  .getSizeBytes())
          .isEqualTo(c.asked());

      Csi.Volume restored =
          csi.controller()
              .createVolume(
                  Requests.restoreVolume(
                      "small-restored-" + c.fsType(),
                      c.asked(),
                      capability,
                      snapshot.getSnapshotId()))
              .getVolume();
      assertThat(restored.getCapacityBytes()).isEqualTo(c.capacity());
      Path restoredDir = mount(restored, capability);
      assertThat(Files.readString(restoredDir.resolve("data"))).isEqualTo("on " + c.fsType());

      for (Csi.Volume volume : List.of(restored, source)) {
        unmount(volume);
      }
      csi.controller().deleteSnapshot(Requests.deleteSnapshot(snapshot.getSnapshotId()));
      csi.controller().deleteVolume(Requests.deleteVolume(restored.getVolumeId()));
      csi.controller().deleteVolume(Requests.deleteVolume(source.getVolumeId()));
    }
    assertThat(HostState.mountsUnder(root)).isEmpty();
    assertThat(HostState.loopDevicesUnder(root)).isEmpty();
  }

  /** Stages and publishes a volume at paths named by its ID; returns the published path. */
  private Path mount(Csi.Volume volume, Csi.VolumeCapability capability) {
    String staging = driver.mounts.resolve("staging/" + volume.getVolumeId()).toString();
    Path target = driver.mounts.resolve("pods/" + volume.getVolumeId() + "/mount");
    csi.node().nodeStageVolume(Requests.stage(volume, staging, capability));
    csi.node().nodePublishVolume(Requests.publish(volume, staging, target.toString(), capability));
    return target;
  }

  private void unmount(Csi.Volume volume) {
    String id = volume.getVolumeId();
    csi.node()
        .nodeUnpublishVolume(
            Requests.unpublish(id, driver.mounts.resolve("pods/" + id + "/mount").toString()));
    csi.node()
        .nodeUnstageVolume(Requests.unstage(id, driver.mounts.resolve("staging/" + id).toString()));
  }
}
