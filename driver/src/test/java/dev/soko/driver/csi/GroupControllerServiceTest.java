package dev.soko.driver.csi;

import static dev.soko.driver.csi.ControllerServiceTest.assertCode;
import static org.assertj.core.api.Assertions.assertThat;

import csi.v1.Csi;
import csi.v1.Csi.GroupControllerServiceCapability.RPC.Type;
import csi.v1.Csi.PluginCapability.Service;
import csi.v1.GroupControllerGrpc.GroupControllerBlockingStub;
import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.health.Readiness;
import dev.soko.driver.testing.CsiHarness;
import dev.soko.driver.testing.FakeVolumeManager;
import dev.soko.driver.volume.StorageException;
import io.grpc.Status;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The GroupController service: what it refuses itself, what it hands the engine, its answers. */
class GroupControllerServiceTest {
  private final FakeVolumeManager engine = new FakeVolumeManager();
  private CsiHarness harness;
  private GroupControllerBlockingStub groups;

  @BeforeEach
  void start() throws Exception {
    engine.holding("vol-a", "vol-b");
    harness =
        new CsiHarness(
            new IdentityService("csi.soko.dev", "t", Readiness.ALWAYS, true),
            new ControllerService(engine, new Topology("node-a"), pools(), GroupIds.AS_KEPT),
            new GroupControllerService(engine, GroupIds.AS_KEPT));
    groups = harness.groupController();
  }

  @AfterEach
  void stop() throws Exception {
    harness.close();
  }

  private static PoolFsTypes pools() {
    return new PoolFsTypes(
        List.of(new PoolConfig("fast", Path.of("/p"), 0, 1, new LinkedHashSet<>(List.of("ext4")))));
  }

  /** The group ID ListSnapshots gives each snapshot. */
  private List<String> listedGroupIds() {
    return harness
        .controller()
        .listSnapshots(Csi.ListSnapshotsRequest.getDefaultInstance())
        .getEntriesList()
        .stream()
        .map(e -> e.getSnapshot().getGroupSnapshotId())
        .toList();
  }

  private static Csi.CreateVolumeGroupSnapshotRequest.Builder create(String name) {
    return Csi.CreateVolumeGroupSnapshotRequest.newBuilder()
        .setName(name)
        .addSourceVolumeIds("vol-a")
        .addSourceVolumeIds("vol-b");
  }

  private static List<Service.Type> advertised(CsiHarness csi) {
    return csi
        .identity()
        .getPluginCapabilities(Csi.GetPluginCapabilitiesRequest.getDefaultInstance())
        .getCapabilitiesList()
        .stream()
        .map(c -> c.getService().getType())
        .toList();
  }

  @Test
  void itIsAdvertisedWhereItIsServedWithItsOneCapability() throws Exception {
    assertThat(advertised(harness)).contains(Service.Type.GROUP_CONTROLLER_SERVICE);
    assertThat(
            groups
                .groupControllerGetCapabilities(
                    Csi.GroupControllerGetCapabilitiesRequest.getDefaultInstance())
                .getCapabilitiesList())
        .extracting(c -> c.getRpc().getType())
        .containsExactly(Type.CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT);
    try (CsiHarness withoutGroups =
        new CsiHarness(new IdentityService("csi.soko.dev", "t", Readiness.ALWAYS))) {
      assertThat(advertised(withoutGroups)).doesNotContain(Service.Type.GROUP_CONTROLLER_SERVICE);
    }
  }

  @Test
  void createHandsTheEngineNameAndSourcesInOrderAndAnswersEveryMemberWithItsGroup() {
    Csi.VolumeGroupSnapshot group =
        groups.createVolumeGroupSnapshot(create("vgs-1").build()).getGroupSnapshot();

    assertThat(engine.lastGroupName).isEqualTo("vgs-1");
    assertThat(engine.lastGroupSources).containsExactly("vol-a", "vol-b");
    assertThat(group.getGroupSnapshotId()).isNotEmpty();
    assertThat(group.getReadyToUse()).isTrue();
    assertThat(group.getCreationTime().getSeconds()).isEqualTo(9);
    assertThat(group.getSnapshotsList())
        .extracting(Csi.Snapshot::getSourceVolumeId, Csi.Snapshot::getGroupSnapshotId)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("vol-a", group.getGroupSnapshotId()),
            org.assertj.core.groups.Tuple.tuple("vol-b", group.getGroupSnapshotId()));
    // ListSnapshots names the group of each member too.
    assertThat(listedGroupIds()).containsOnly(group.getGroupSnapshotId());
  }

  @Test
  void createRefusesWhatNoEngineCouldTake() {
    assertCode(
        () -> groups.createVolumeGroupSnapshot(create("").build()),
        Status.Code.INVALID_ARGUMENT,
        "name is required");
    assertCode(
        () ->
            groups.createVolumeGroupSnapshot(
                Csi.CreateVolumeGroupSnapshotRequest.newBuilder().setName("g").build()),
        Status.Code.INVALID_ARGUMENT,
        "source_volume_ids is required");
    assertCode(
        () -> groups.createVolumeGroupSnapshot(create("g").addSourceVolumeIds("").build()),
        Status.Code.INVALID_ARGUMENT,
        "source_volume_ids entry is required");
    assertCode(
        () ->
            groups.createVolumeGroupSnapshot(
                create("g").addAllSourceVolumeIds(Collections.nCopies(127, "vol-x")).build()),
        Status.Code.INVALID_ARGUMENT,
        "more than 128");
    assertCode(
        () -> groups.createVolumeGroupSnapshot(create("g").putParameters("pool", "x").build()),
        Status.Code.INVALID_ARGUMENT,
        "unknown snapshot parameter");
    assertThat(engine.lastGroupName).as("the engine saw none of them").isNull();
    // csi.storage.k8s.io/ keys are the sidecar's, always allowed; deletionPolicy is what
    // Kubernetes' storage suite copies into its group classes' parameters
    groups.createVolumeGroupSnapshot(
        create("g")
            .putParameters("csi.storage.k8s.io/volumegroupsnapshot/name", "vgs")
            .putParameters("deletionPolicy", "Retain")
            .putSecrets("token", "s3cret")
            .build());
    assertCode(
        () ->
            harness
                .controller()
                .createSnapshot(
                    Csi.CreateSnapshotRequest.newBuilder()
                        .setName("s")
                        .setSourceVolumeId("vol-a")
                        .putParameters("deletionPolicy", "Retain")
                        .build()),
        Status.Code.INVALID_ARGUMENT,
        "unknown snapshot parameter");
  }

  @Test
  void theEnginesRefusalsKeepTheirCodes() {
    engine.nextFailure = StorageException.notFound("volume %s does not exist", "vol-z");
    assertCode(
        () -> groups.createVolumeGroupSnapshot(create("g").build()),
        Status.Code.NOT_FOUND,
        "vol-z");
    engine.nextFailure = StorageException.alreadyExists("a group snapshot named g exists");
    assertCode(
        () -> groups.createVolumeGroupSnapshot(create("g").build()),
        Status.Code.ALREADY_EXISTS,
        "exists");
    engine.nextFailure = StorageException.invalid("snapshot IDs do not name the members");
    assertCode(
        () ->
            groups.deleteVolumeGroupSnapshot(
                Csi.DeleteVolumeGroupSnapshotRequest.newBuilder()
                    .setGroupSnapshotId("group-1")
                    .addSnapshotIds("snap-9")
                    .build()),
        Status.Code.INVALID_ARGUMENT,
        "members");
  }

  @Test
  void getAndDeleteNeedAnIdAndHandTheEngineTheMembersTheyName() {
    assertCode(
        () -> groups.getVolumeGroupSnapshot(Csi.GetVolumeGroupSnapshotRequest.getDefaultInstance()),
        Status.Code.INVALID_ARGUMENT,
        "group_snapshot_id is required");
    assertCode(
        () ->
            groups.deleteVolumeGroupSnapshot(
                Csi.DeleteVolumeGroupSnapshotRequest.getDefaultInstance()),
        Status.Code.INVALID_ARGUMENT,
        "group_snapshot_id is required");
    assertCode(
        () ->
            groups.getVolumeGroupSnapshot(
                Csi.GetVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId("nope").build()),
        Status.Code.NOT_FOUND,
        "nope");

    Csi.VolumeGroupSnapshot made =
        groups.createVolumeGroupSnapshot(create("g").build()).getGroupSnapshot();
    List<String> members =
        made.getSnapshotsList().stream().map(Csi.Snapshot::getSnapshotId).toList();
    Csi.VolumeGroupSnapshot got =
        groups
            .getVolumeGroupSnapshot(
                Csi.GetVolumeGroupSnapshotRequest.newBuilder()
                    .setGroupSnapshotId(made.getGroupSnapshotId())
                    .addAllSnapshotIds(members)
                    .build())
            .getGroupSnapshot();
    assertThat(got).isEqualTo(made);
    assertThat(engine.lastGroupMembers).isEqualTo(members);

    groups.deleteVolumeGroupSnapshot(
        Csi.DeleteVolumeGroupSnapshotRequest.newBuilder()
            .setGroupSnapshotId(made.getGroupSnapshotId())
            .build());
    assertThat(engine.lastGroupMembers).isEmpty();
    assertThat(engine.groups).isEmpty();
  }

  /**
   * A node in a cluster shows its groups as the controller answered them, since the snapshot
   * controller finds a member's group by the ID the node's ListSnapshots gives it.
   */
  @Test
  void aNodeInAClusterShowsItsGroupsAsTheControllerAnsweredThem() throws Exception {
    harness.close();
    GroupIds onNode = GroupIds.onNode("node-a");
    harness =
        new CsiHarness(
            new ControllerService(engine, new Topology("node-a"), pools(), onNode),
            new GroupControllerService(engine, onNode));
    groups = harness.groupController();

    Csi.VolumeGroupSnapshot made =
        groups.createVolumeGroupSnapshot(create("g").build()).getGroupSnapshot();
    String kept = engine.groups.keySet().iterator().next();
    assertThat(made.getGroupSnapshotId()).isEqualTo(kept + "@node-a");
    assertThat(made.getSnapshotsList())
        .extracting(Csi.Snapshot::getGroupSnapshotId)
        .containsOnly(made.getGroupSnapshotId());
    assertThat(listedGroupIds()).containsOnly(made.getGroupSnapshotId());

    for (String id : List.of(made.getGroupSnapshotId(), kept)) {
      assertThat(
              groups
                  .getVolumeGroupSnapshot(
                      Csi.GetVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId(id).build())
                  .getGroupSnapshot())
          .as("taken as shown or as kept: %s", id)
          .isEqualTo(made);
    }
    assertCode(
        () ->
            groups.getVolumeGroupSnapshot(
                Csi.GetVolumeGroupSnapshotRequest.newBuilder()
                    .setGroupSnapshotId(kept + "@node-b")
                    .build()),
        Status.Code.NOT_FOUND,
        "is on node node-b, not on this node node-a");
    groups.deleteVolumeGroupSnapshot(
        Csi.DeleteVolumeGroupSnapshotRequest.newBuilder()
            .setGroupSnapshotId(made.getGroupSnapshotId())
            .build());
    assertThat(engine.groups).isEmpty();
  }
}
