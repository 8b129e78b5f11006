package dev.soko.driver.csi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import csi.v1.ControllerGrpc.ControllerBlockingStub;
import csi.v1.Csi;
import csi.v1.Csi.ControllerServiceCapability.RPC.Type;
import csi.v1.Csi.VolumeCapability.AccessMode;
import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.model.ContentSource;
import dev.soko.driver.model.Snapshot;
import dev.soko.driver.testing.Caps;
import dev.soko.driver.testing.CsiHarness;
import dev.soko.driver.testing.FakeVolumeManager;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ControllerServiceTest {
  private final FakeVolumeManager engine = new FakeVolumeManager();
  private CsiHarness harness;
  private ControllerBlockingStub controller;

  @BeforeEach
  void start() throws Exception {
    PoolFsTypes pools =
        new PoolFsTypes(
            List.of(
                new PoolConfig("fast", Path.of("/p1"), 0, 1, new LinkedHashSet<>(List.of("ext4"))),
                new PoolConfig(
                    "big", Path.of("/p2"), 0, 1, new LinkedHashSet<>(List.of("xfs", "ext4")))));
    harness =
        new CsiHarness(
            new ControllerService(engine, new Topology("node-a"), pools, GroupIds.AS_KEPT));
    controller = harness.controller();
  }

  @AfterEach
  void stop() throws Exception {
    harness.close();
  }

  private static Csi.CreateVolumeRequest.Builder create(String name) {
    return Csi.CreateVolumeRequest.newBuilder()
        .setName(name)
        .addVolumeCapabilities(Caps.mount("ext4"))
        .setCapacityRange(Csi.CapacityRange.newBuilder().setRequiredBytes(10 << 20));
  }

  static void assertCode(ThrowingCallable call, Status.Code code, String messagePart) {
    assertThatThrownBy(call)
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(code);
              assertThat(e.getStatus().getDescription()).contains(messagePart);
            });
  }

  @Test
  void createVolumeTranslatesRequestAndAnswersWithTopology() {
    Csi.CreateVolumeResponse response =
        controller.createVolume(
            create("pvc-1")
                .putParameters("pool", "big")
                .putParameters("csi.storage.k8s.io/pvc/name", "data")
                .setCapacityRange(
                    Csi.CapacityRange.newBuilder().setRequiredBytes(5 << 20).setLimitBytes(9 << 20))
                .build());

    assertThat(engine.lastCreate.name()).isEqualTo("pvc-1");
    assertThat(engine.lastCreate.pool()).isEqualTo("big");
    assertThat(engine.lastCreate.fsType()).isEqualTo("ext4");
    assertThat(engine.lastCreate.accessType()).isEqualTo(AccessType.FILESYSTEM);
    assertThat(engine.lastCreate.requiredBytes()).isEqualTo(5 << 20);
    assertThat(engine.lastCreate.limitBytes()).isEqualTo(9 << 20);
    assertThat(engine.lastCreate.parameters()).isEqualTo(Map.of("pool", "big"));
    assertThat(engine.lastCreate.source()).isEqualTo(ContentSource.EMPTY);
    Csi.Volume volume = response.getVolume();
    assertThat(volume.getVolumeId()).isEqualTo("vol-1");
    assertThat(volume.getCapacityBytes()).isEqualTo(5 << 20);
    assertThat(volume.getAccessibleTopologyList())
        .containsExactly(
            Csi.Topology.newBuilder().putSegments("topology.soko.dev/node", "node-a").build());
    assertThat(volume.getVolumeContextMap()).containsEntry("soko.dev/pool", "big");
  }

  @Test
  void createVolumeFromSnapshotOrVolumePassesTheSourceAndEchoesIt() {
    Csi.VolumeContentSource snapshot =
        Csi.VolumeContentSource.newBuilder()
            .setSnapshot(Csi.VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId("s-9"))
            .build();
    Csi.Volume restored =
        controller.createVolume(create("r").setVolumeContentSource(snapshot).build()).getVolume();
    assertThat(engine.lastCreate.source()).isEqualTo(new ContentSource.FromSnapshot("s-9"));
    assertThat(restored.getContentSource()).isEqualTo(snapshot);

    controller.createVolume(
        create("c")
            .setVolumeContentSource(
                Csi.VolumeContentSource.newBuilder()
                    .setVolume(Csi.VolumeContentSource.VolumeSource.newBuilder().setVolumeId("v")))
            .build());
    assertThat(engine.lastCreate.source()).isEqualTo(new ContentSource.FromVolume("v"));
  }

  @Test
  void blockVolumesIgnoreTheFsTypeParameter() {
    controller.createVolume(
        Csi.CreateVolumeRequest.newBuilder()
            .setName("b")
            .addVolumeCapabilities(Caps.block())
            .putParameters("fsType", "xfs")
            .build());
    assertThat(engine.lastCreate.accessType()).isEqualTo(AccessType.BLOCK);
    assertThat(engine.lastCreate.fsType()).isEmpty();
  }

  @Test
  void createVolumeRefusesBadInputWithInvalidArgument() {
    Status.Code invalid = Status.Code.INVALID_ARGUMENT;
    assertCode(() -> controller.createVolume(create("").build()), invalid, "name is required");
    assertCode(
        () -> controller.createVolume(create("x".repeat(129)).build()), invalid, "longer than");
    assertCode(
        () -> controller.createVolume(create("a").clearVolumeCapabilities().build()),
        invalid,
        "volume_capabilities is required");
    assertCode(
        () ->
            controller.createVolume(
                create("a")
                    .setVolumeCapabilities(
                        0, Caps.withMode(Caps.mount(""), AccessMode.Mode.MULTI_NODE_MULTI_WRITER))
                    .build()),
        invalid,
        "MULTI_NODE_MULTI_WRITER");
    assertCode(
        () -> controller.createVolume(create("a").putParameters("color", "blue").build()),
        invalid,
        "unknown parameter 'color'");
    assertCode(
        () -> controller.createVolume(create("a").putParameters("fsType", "ntfs").build()),
        invalid,
        "fsType");
    assertCode(
        () ->
            controller.createVolume(
                create("a").setVolumeCapabilities(0, Caps.mount("ext4", "bind")).build()),
        invalid,
        "mount flag 'bind'");
    assertCode(
        () -> controller.createVolume(create("a").putParameters("fsType", "xfs").build()),
        invalid,
        "conflicting filesystem types");
    assertCode(
        () -> controller.createVolume(create("a").addVolumeCapabilities(Caps.block()).build()),
        invalid,
        "mix block and mount");
    assertCode(
        () ->
            controller.createVolume(
                create("a")
                    .setCapacityRange(
                        Csi.CapacityRange.newBuilder().setRequiredBytes(10).setLimitBytes(5))
                    .build()),
        invalid,
        "above limit_bytes");
    assertCode(
        () ->
            controller.createVolume(
                create("a")
                    .setCapacityRange(Csi.CapacityRange.newBuilder().setRequiredBytes(-1))
                    .build()),
        invalid,
        "negative");
    assertThat(engine.lastCreate).as("nothing reached the engine").isNull();
  }

  @Test
  void mutableParametersReachTheEngineAtCreateAndModify() {
    controller.createVolume(create("a").putMutableParams("readIOPS", "200").build());
    assertThat(engine.lastCreate.mutableParameters()).isEqualTo(Map.of("readIOPS", "200"));

    controller.controllerModifyVolume(
        Csi.ControllerModifyVolumeRequest.newBuilder()
            .setVolumeId("vol-1")
            .putMutableParams("writeIOPS", "50")
            .build());
    assertThat(engine.lastModify).isEqualTo(Map.of("writeIOPS", "50"));
    assertCode(
        () ->
            controller.controllerModifyVolume(
                Csi.ControllerModifyVolumeRequest.newBuilder().build()),
        Status.Code.INVALID_ARGUMENT,
        "volume_id");
  }

  @Test
  void createVolumeForAnotherNodeIsResourceExhausted() {
    Csi.Topology other =
        Csi.Topology.newBuilder().putSegments("topology.soko.dev/node", "node-b").build();
    assertCode(
        () ->
            controller.createVolume(
                create("a")
                    .setAccessibilityRequirements(
                        Csi.TopologyRequirement.newBuilder().addRequisite(other))
                    .build()),
        Status.Code.RESOURCE_EXHAUSTED,
        "exclude this node");
    Csi.Topology mine = other.toBuilder().putSegments("topology.soko.dev/node", "node-a").build();
    controller.createVolume(
        create("b")
            .setAccessibilityRequirements(
                Csi.TopologyRequirement.newBuilder().addRequisite(other).addRequisite(mine))
            .build());
    assertThat(engine.lastCreate.name()).isEqualTo("b");
  }

  @Test
  void listVolumesPassesPaginationThroughAndReportsConditions() {
    for (String name : List.of("a", "b", "c")) {
      controller.createVolume(create(name).build());
    }
    Csi.ListVolumesResponse first =
        controller.listVolumes(Csi.ListVolumesRequest.newBuilder().setMaxEntries(2).build());
    assertThat(engine.lastListMax).isEqualTo(2);
    assertThat(first.getEntriesList()).hasSize(2);
    assertThat(first.getNextToken()).isEqualTo("2");
    assertThat(first.getEntries(0).getStatus().getVolumeCondition().getAbnormal()).isFalse();

    Csi.ListVolumesResponse second =
        controller.listVolumes(
            Csi.ListVolumesRequest.newBuilder().setStartingToken(first.getNextToken()).build());
    assertThat(engine.lastListToken).isEqualTo("2");
    assertThat(second.getEntriesList()).extracting(e -> e.getVolume().getVolumeId()).hasSize(1);
    assertThat(second.getNextToken()).isEmpty();

    assertCode(
        () -> controller.listVolumes(Csi.ListVolumesRequest.newBuilder().setMaxEntries(-1).build()),
        Status.Code.INVALID_ARGUMENT,
        "max_entries");
    assertCode(
        () ->
            controller.listVolumes(
                Csi.ListVolumesRequest.newBuilder().setStartingToken("nonsense").build()),
        Status.Code.ABORTED,
        "bad token");
  }

  @Test
  void controllerGetVolumeFindsOrAnswersNotFound() {
    String id = controller.createVolume(create("a").build()).getVolume().getVolumeId();
    Csi.ControllerGetVolumeResponse found =
        controller.controllerGetVolume(
            Csi.ControllerGetVolumeRequest.newBuilder().setVolumeId(id).build());
    assertThat(found.getVolume().getVolumeId()).isEqualTo(id);
    assertThat(found.getStatus().getVolumeCondition().getMessage()).isEqualTo("volume is healthy");
    assertCode(
        () ->
            controller.controllerGetVolume(
                Csi.ControllerGetVolumeRequest.newBuilder().setVolumeId("missing").build()),
        Status.Code.NOT_FOUND,
        "missing");
  }

  @Test
  void advertisesExactlyTheImplementedCapabilities() {
    List<Type> types =
        controller
            .controllerGetCapabilities(Csi.ControllerGetCapabilitiesRequest.getDefaultInstance())
            .getCapabilitiesList()
            .stream()
            .map(c -> c.getRpc().getType())
            .toList();
    assertThat(types)
        .containsExactlyInAnyOrder(
            Type.CREATE_DELETE_VOLUME,
            Type.CREATE_DELETE_SNAPSHOT,
            Type.LIST_VOLUMES,
            Type.LIST_SNAPSHOTS,
            Type.MODIFY_VOLUME,
            Type.GET_CAPACITY,
            Type.CLONE_VOLUME,
            Type.EXPAND_VOLUME,
            Type.GET_VOLUME,
            Type.VOLUME_CONDITION,
            Type.SINGLE_NODE_MULTI_WRITER);
  }

  @Test
  void unadvertisedCallsAreUnimplemented() {
    assertCode(
        () ->
            controller.controllerPublishVolume(
                Csi.ControllerPublishVolumeRequest.newBuilder().setVolumeId("v").build()),
        Status.Code.UNIMPLEMENTED,
        "");
  }

  @Test
  void snapshotsAreCreatedListedAndDeleted() {
    String volume = controller.createVolume(create("a").build()).getVolume().getVolumeId();
    Csi.Snapshot snapshot =
        controller
            .createSnapshot(
                Csi.CreateSnapshotRequest.newBuilder()
                    .setName("snap")
                    .setSourceVolumeId(volume)
                    .putParameters("csi.storage.k8s.io/volumesnapshot/name", "s")
                    .build())
            .getSnapshot();
    assertThat(snapshot.getReadyToUse()).isTrue();
    assertThat(snapshot.getSourceVolumeId()).isEqualTo(volume);
    assertThat(snapshot.getCreationTime().getSeconds()).isEqualTo(5);
    assertThat(snapshot.getCreationTime().getNanos()).isEqualTo(7);

    Csi.ListSnapshotsResponse listed =
        controller.listSnapshots(
            Csi.ListSnapshotsRequest.newBuilder().setSourceVolumeId(volume).build());
    assertThat(engine.lastSnapshotFilter.sourceVolumeId()).isEqualTo(volume);
    assertThat(listed.getEntriesList())
        .extracting(e -> e.getSnapshot().getSnapshotId())
        .containsExactly(snapshot.getSnapshotId());

    // A snapshot whose image file went missing is listed, but not as ready to use.
    Snapshot damaged = engine.snapshots.get(snapshot.getSnapshotId());
    engine.snapshots.put(
        damaged.id(),
        new Snapshot(
            damaged.id(),
            damaged.name(),
            damaged.sourceVolumeId(),
            damaged.sizeBytes(),
            damaged.createdAt(),
            false,
            ""));
    assertThat(
            controller
                .listSnapshots(Csi.ListSnapshotsRequest.getDefaultInstance())
                .getEntries(0)
                .getSnapshot()
                .getReadyToUse())
        .isFalse();

    controller.deleteSnapshot(
        Csi.DeleteSnapshotRequest.newBuilder().setSnapshotId(snapshot.getSnapshotId()).build());
    assertThat(engine.snapshots).isEmpty();

    assertCode(
        () ->
            controller.createSnapshot(
                Csi.CreateSnapshotRequest.newBuilder()
                    .setName("s")
                    .setSourceVolumeId(volume)
                    .putParameters("speed", "fast")
                    .build()),
        Status.Code.INVALID_ARGUMENT,
        "snapshots take no parameters");
    assertCode(
        () ->
            controller.createSnapshot(Csi.CreateSnapshotRequest.newBuilder().setName("s").build()),
        Status.Code.INVALID_ARGUMENT,
        "source_volume_id is required");
    assertCode(
        () -> controller.deleteSnapshot(Csi.DeleteSnapshotRequest.getDefaultInstance()),
        Status.Code.INVALID_ARGUMENT,
        "snapshot_id is required");
  }

  @Test
  void controllerExpandValidatesAndReturnsTheEngineAnswer() {
    Csi.ControllerExpandVolumeResponse response =
        controller.controllerExpandVolume(
            Csi.ControllerExpandVolumeRequest.newBuilder()
                .setVolumeId("v")
                .setCapacityRange(Csi.CapacityRange.newBuilder().setRequiredBytes(1 << 30))
                .build());
    assertThat(engine.lastExpand).containsExactly(1L << 30, 0L);
    assertThat(response.getCapacityBytes()).isEqualTo(1L << 30);
    assertThat(response.getNodeExpansionRequired()).isTrue();
    assertCode(
        () ->
            controller.controllerExpandVolume(
                Csi.ControllerExpandVolumeRequest.newBuilder().setVolumeId("v").build()),
        Status.Code.INVALID_ARGUMENT,
        "capacity_range is required");
  }

  @Test
  void deleteVolumeNeedsAnId() {
    assertCode(
        () -> controller.deleteVolume(Csi.DeleteVolumeRequest.getDefaultInstance()),
        Status.Code.INVALID_ARGUMENT,
        "volume_id is required");
    String id = controller.createVolume(create("a").build()).getVolume().getVolumeId();
    controller.deleteVolume(Csi.DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
    assertThat(engine.volumes).isEmpty();
  }
}
