package dev.soko.driver.csi;

import static dev.soko.driver.csi.ControllerServiceTest.assertCode;
import static org.assertj.core.api.Assertions.assertThat;

import csi.v1.Csi;
import csi.v1.Csi.NodeServiceCapability.RPC.Type;
import csi.v1.Csi.VolumeCapability.AccessMode;
import csi.v1.NodeGrpc.NodeBlockingStub;
import dev.soko.driver.exec.FakeExec;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.model.VolumeCondition;
import dev.soko.driver.mount.MountException;
import dev.soko.driver.mount.PathPolicy;
import dev.soko.driver.mount.SystemMounter;
import dev.soko.driver.testing.Caps;
import dev.soko.driver.testing.CsiHarness;
import dev.soko.driver.testing.FakeVolumeManager;
import dev.soko.driver.volume.VolumeUsage;
import io.grpc.Status;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NodeServiceTest {
  @TempDir Path temp;
  private Path root;
  private final FakeVolumeManager engine = new FakeVolumeManager();
  private CsiHarness harness;
  private NodeBlockingStub node;

  @BeforeEach
  void start() throws Exception {
    root = Files.createDirectories(temp.resolve("kubelet"));
    harness = new CsiHarness(new NodeService(engine, "node-a", new PathPolicy(List.of(root))));
    node = harness.node();
  }

  @AfterEach
  void stop() throws Exception {
    harness.close();
  }

  private Csi.NodeStageVolumeRequest.Builder stage(String path) {
    return Csi.NodeStageVolumeRequest.newBuilder()
        .setVolumeId("vol-1")
        .setStagingTargetPath(path)
        .setVolumeCapability(Caps.mount("xfs", "noatime"))
        .putSecrets("password", "hunter2")
        .putVolumeContext("anything", "ignored");
  }

  @Test
  void stageTranslatesTheRequest() {
    Path staging = root.resolve("plugins/staging/vol-1");
    node.nodeStageVolume(stage(staging.toString()).build());
    assertThat(engine.lastStage.volumeId()).isEqualTo("vol-1");
    assertThat(engine.lastStage.stagingPath()).isEqualTo(staging);
    assertThat(engine.lastStage.accessType()).isEqualTo(AccessType.FILESYSTEM);
    assertThat(engine.lastStage.fsType()).isEqualTo("xfs");
    assertThat(engine.lastStage.mountFlags()).containsExactly("noatime");
  }

  @Test
  void pathsOutsideTheAllowedRootAreRefused() throws Exception {
    Status.Code invalid = Status.Code.INVALID_ARGUMENT;
    assertCode(() -> node.nodeStageVolume(stage("").build()), invalid, "is required");
    assertCode(() -> node.nodeStageVolume(stage("relative/x").build()), invalid, "absolute");
    assertCode(
        () -> node.nodeStageVolume(stage(root + "/a/../../../etc").build()), invalid, "normalised");
    assertCode(() -> node.nodeStageVolume(stage("/etc/x").build()), invalid, "allowed path root");
    assertCode(() -> node.nodeStageVolume(stage(root.toString()).build()), invalid, "root");
    assertCode(
        () -> node.nodeStageVolume(stage(root + "/" + "x".repeat(5000)).build()),
        invalid,
        "longer than");
    Path outside = Files.createDirectories(temp.resolve("outside"));
    Files.createSymbolicLink(root.resolve("link"), outside);
    assertCode(
        () -> node.nodeStageVolume(stage(root + "/link/target").build()),
        invalid,
        "resolves outside");
    Files.createSymbolicLink(root.resolve("dangling"), temp.resolve("nothing-here"));
    assertCode(
        () -> node.nodeStageVolume(stage(root + "/dangling").build()),
        invalid,
        "cannot be resolved");
    assertThat(engine.lastStage).isNull();
  }

  @Test
  void stageNeedsACapabilityAndAnId() {
    String path = root.resolve("s").toString();
    assertCode(
        () -> node.nodeStageVolume(stage(path).clearVolumeCapability().build()),
        Status.Code.INVALID_ARGUMENT,
        "volume_capability is required");
    assertCode(
        () -> node.nodeStageVolume(stage(path).setVolumeId("").build()),
        Status.Code.INVALID_ARGUMENT,
        "volume_id is required");
    assertCode(
        () -> node.nodeStageVolume(stage(path).setVolumeCapability(Caps.mount("vfat")).build()),
        Status.Code.INVALID_ARGUMENT,
        "fs_type 'vfat'");
  }

  @Test
  void publishHonoursReadOnlyFromFlagAndAccessMode() {
    Csi.NodePublishVolumeRequest.Builder request =
        Csi.NodePublishVolumeRequest.newBuilder()
            .setVolumeId("vol-1")
            .setStagingTargetPath(root.resolve("staging").toString())
            .setTargetPath(root.resolve("pods/p/mount").toString())
            .setVolumeCapability(Caps.block());
    node.nodePublishVolume(request.build());
    assertThat(engine.lastPublish.readOnly()).isFalse();
    assertThat(engine.lastPublish.accessType()).isEqualTo(AccessType.BLOCK);
    assertThat(engine.lastPublish.targetPath()).isEqualTo(root.resolve("pods/p/mount"));

    node.nodePublishVolume(request.setReadonly(true).build());
    assertThat(engine.lastPublish.readOnly()).isTrue();

    node.nodePublishVolume(
        request
            .setReadonly(false)
            .setVolumeCapability(
                Caps.withMode(Caps.mount(""), AccessMode.Mode.SINGLE_NODE_READER_ONLY))
            .build());
    assertThat(engine.lastPublish.readOnly()).isTrue();

    assertCode(
        () -> node.nodePublishVolume(request.clearStagingTargetPath().build()),
        Status.Code.INVALID_ARGUMENT,
        "staging_target_path is required");
  }

  @Test
  void unstageAndUnpublishCheckPathsToo() {
    node.nodeUnpublishVolume(
        Csi.NodeUnpublishVolumeRequest.newBuilder()
            .setVolumeId("v")
            .setTargetPath(root.resolve("t").toString())
            .build());
    assertThat(engine.lastPath).isEqualTo(root.resolve("t"));
    assertCode(
        () ->
            node.nodeUnstageVolume(
                Csi.NodeUnstageVolumeRequest.newBuilder()
                    .setVolumeId("v")
                    .setStagingTargetPath("/var/../etc")
                    .build()),
        Status.Code.INVALID_ARGUMENT,
        "staging_target_path");
  }

  @Test
  void statsReportBytesInodesAndCondition() {
    engine.usage =
        new VolumeUsage(1000, 100, 900, 64, 10, 54, new VolumeCondition(true, "io errors"));
    Csi.NodeGetVolumeStatsResponse stats =
        node.nodeGetVolumeStats(
            Csi.NodeGetVolumeStatsRequest.newBuilder()
                .setVolumeId("v")
                .setVolumePath(root.resolve("m").toString())
                .build());
    assertThat(stats.getUsageList())
        .extracting(Csi.VolumeUsage::getUnit, Csi.VolumeUsage::getTotal, Csi.VolumeUsage::getUsed)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple(Csi.VolumeUsage.Unit.BYTES, 1000L, 100L),
            org.assertj.core.groups.Tuple.tuple(Csi.VolumeUsage.Unit.INODES, 64L, 10L));
    assertThat(stats.getVolumeCondition().getAbnormal()).isTrue();
    assertThat(stats.getVolumeCondition().getMessage()).isEqualTo("io errors");

    engine.usage = new VolumeUsage(1000, 0, 0, 0, 0, 0, VolumeCondition.HEALTHY);
    Csi.NodeGetVolumeStatsResponse block =
        node.nodeGetVolumeStats(
            Csi.NodeGetVolumeStatsRequest.newBuilder()
                .setVolumeId("v")
                .setVolumePath(root.resolve("m").toString())
                .build());
    assertThat(block.getUsageList()).hasSize(1);
  }

  @Test
  void aVolumePathOutsideTheRootsCannotHoldTheVolume() {
    assertCode(
        () ->
            node.nodeGetVolumeStats(
                Csi.NodeGetVolumeStatsRequest.newBuilder()
                    .setVolumeId("v")
                    .setVolumePath("some/path")
                    .build()),
        Status.Code.NOT_FOUND,
        "volume v is not staged or published");
    assertCode(
        () ->
            node.nodeExpandVolume(
                Csi.NodeExpandVolumeRequest.newBuilder()
                    .setVolumeId("v")
                    .setVolumePath("/etc")
                    .build()),
        Status.Code.NOT_FOUND,
        "volume_path");
    assertCode(
        () ->
            node.nodeGetVolumeStats(
                Csi.NodeGetVolumeStatsRequest.newBuilder().setVolumeId("v").build()),
        Status.Code.INVALID_ARGUMENT,
        "volume_path is required");
    assertThat(engine.lastPath).isNull();
  }

  @Test
  void refusedOnlineGrowthReachesTheClientAsFailedPrecondition() throws Exception {
    // The exception a real SystemMounter raises when resize2fs lacks CAP_SYS_RESOURCE must keep
    // its code through the service and the interceptor (it must not turn into INTERNAL).
    engine.nextFailure = refusedExt4Growth();
    Path published = Files.createDirectories(root.resolve("pods/p/volumes/v/mount"));
    assertCode(
        () ->
            node.nodeExpandVolume(
                Csi.NodeExpandVolumeRequest.newBuilder()
                    .setVolumeId("v")
                    .setVolumePath(published.toString())
                    .build()),
        Status.Code.FAILED_PRECONDITION,
        "lacks CAP_SYS_RESOURCE");
  }

  /** What a real SystemMounter throws when resize2fs may not grow a mounted ext4. */
  private static MountException refusedExt4Growth() {
    FakeExec exec = new FakeExec();
    exec.on(List.of("resize2fs"), 1, "", "resize2fs: Permission denied to resize filesystem");
    try {
      new SystemMounter(exec, Path.of("/proc/self/mountinfo"))
          .growFilesystem("/dev/loop1", Path.of("/k/s"), "ext4");
    } catch (MountException e) {
      return e;
    }
    throw new AssertionError("the refused growth was not reported");
  }

  @Test
  void expandPassesTheRangeOrNothing() {
    Csi.NodeExpandVolumeResponse response =
        node.nodeExpandVolume(
            Csi.NodeExpandVolumeRequest.newBuilder()
                .setVolumeId("v")
                .setVolumePath(root.resolve("m").toString())
                .setCapacityRange(Csi.CapacityRange.newBuilder().setRequiredBytes(2048))
                .build());
    assertThat(response.getCapacityBytes()).isEqualTo(2048);
    assertThat(engine.lastExpand).containsExactly(2048L, 0L);

    node.nodeExpandVolume(
        Csi.NodeExpandVolumeRequest.newBuilder()
            .setVolumeId("v")
            .setVolumePath(root.resolve("m").toString())
            .build());
    assertThat(engine.lastExpand).containsExactly(0L, 0L);
  }

  @Test
  void infoAndCapabilities() {
    Csi.NodeGetInfoResponse info = node.nodeGetInfo(Csi.NodeGetInfoRequest.getDefaultInstance());
    assertThat(info.getNodeId()).isEqualTo("node-a");
    assertThat(info.getMaxVolumesPerNode()).isEqualTo(7);
    assertThat(info.getAccessibleTopology().getSegmentsMap())
        .containsExactly(java.util.Map.entry("topology.soko.dev/node", "node-a"));

    assertThat(
            node.nodeGetCapabilities(Csi.NodeGetCapabilitiesRequest.getDefaultInstance())
                .getCapabilitiesList())
        .extracting(c -> c.getRpc().getType())
        .containsExactlyInAnyOrder(
            Type.STAGE_UNSTAGE_VOLUME,
            Type.GET_VOLUME_STATS,
            Type.EXPAND_VOLUME,
            Type.VOLUME_CONDITION,
            Type.SINGLE_NODE_MULTI_WRITER);
  }
}
