package dev.soko.driver.volume;

import static dev.soko.driver.volume.EngineFixture.MIB;
import static dev.soko.driver.volume.EngineFixture.block;
import static dev.soko.driver.volume.EngineFixture.fs;
import static dev.soko.driver.volume.EngineFixture.reason;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import dev.soko.driver.exec.ExecResult;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.model.ContentSource;
import dev.soko.driver.model.GroupSnapshot;
import dev.soko.driver.model.Snapshot;
import dev.soko.driver.model.Volume;
import dev.soko.driver.mount.MountException;
import dev.soko.driver.volume.StorageException.Reason;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The engine's group snapshots over fake mounts and processes: freezing, undoing, answers. */
class GroupSnapshotTest {
  @TempDir Path dir;

  /** Two ext4 volumes staged (so their filesystems are frozen for a copy) and one block volume. */
  private record Scene(EngineFixture f, LocalVolumeManager engine, List<Volume> volumes) {
    List<String> ids() {
      return volumes.stream().map(Volume::id).toList();
    }

    Path staging(int i) {
      return f.kubelet.resolve("staging/" + volumes.get(i).name());
    }
  }

  private Scene scene(EngineFixture f, LocalVolumeManager engine) {
    List<Volume> volumes = new ArrayList<>();
    for (String name : List.of("data", "log")) {
      Volume v = engine.createVolume(fs(name, 20 * MIB));
      engine.stage(
          new StageRequest(
              v.id(), f.kubelet.resolve("staging/" + name), AccessType.FILESYSTEM, "", List.of()));
      volumes.add(v);
    }
    volumes.add(engine.createVolume(block("raw", MIB)));
    return new Scene(f, engine, volumes);
  }

  @Test
  void everyStagedFilesystemIsFrozenForEveryCopyAndAllAreThawedLastFirst() {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    List<Set<Path>> frozenDuringCopies = new ArrayList<>();
    try (LocalVolumeManager engine = f.open()) {
      Scene s = scene(f, engine);
      copyRecordingFreezes(f, frozenDuringCopies);
      GroupSnapshot group = engine.createGroupSnapshot("g", s.ids());

      assertThat(frozenDuringCopies)
          .as("each of the three copies ran with both filesystems frozen")
          .hasSize(3)
          .allSatisfy(frozen -> assertThat(frozen).containsOnly(s.staging(0), s.staging(1)));
      assertThat(f.mounter.frozen()).as("nothing stays frozen").isEmpty();
      assertThat(f.mounter.log())
          .filteredOn(line -> line.contains("freeze"))
          .containsExactly(
              "freeze " + s.staging(0),
              "freeze " + s.staging(1),
              "unfreeze " + s.staging(1),
              "unfreeze " + s.staging(0));
      assertThat(group.readyToUse()).isTrue();
      assertThat(group.members())
          .extracting(Snapshot::sourceVolumeId)
          .containsExactlyElementsOf(s.ids());
      assertThat(group.members())
          .allSatisfy(m -> assertThat(m.groupSnapshotId()).isEqualTo(group.id()));
    }
  }

  @Test
  void aRawBlockVolumeInUseIsRefusedNamingItAndNothingIsFrozenOrMade() throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    try (LocalVolumeManager engine = f.open()) {
      Scene s = scene(f, engine);
      long available = engine.capacity().get(0).availableBytes();
      String raw = s.ids().get(2);
      Path rawStaging = f.kubelet.resolve("staging/raw");
      engine.stage(new StageRequest(raw, rawStaging, AccessType.BLOCK, "", List.of()));

      assertThatThrownBy(() -> engine.createGroupSnapshot("g", s.ids()))
          .isInstanceOfSatisfying(
              StorageException.class,
              e -> assertThat(e.reason()).isEqualTo(Reason.FAILED_PRECONDITION))
          .hasMessage(
              "group snapshot \"g\" cannot copy its volumes at one instant, so none is copied:"
                  + " volume \""
                  + raw
                  + "\": it is a raw block volume in use: a device has no filesystem to freeze, so"
                  + " nothing stops its writer during the copies. A group may hold staged"
                  + " filesystem volumes, which are frozen together, and volumes not in use");
      assertThat(f.mounter.log()).noneMatch(line -> line.contains("freeze"));
      assertNothingLeft(f, engine, available);

      // Unstaged, it has no writer again, and the same group is taken.
      engine.unstage(raw, rawStaging);
      assertThat(engine.createGroupSnapshot("g", s.ids()).readyToUse()).isTrue();
    }
  }

  @Test
  void aFilesystemVolumeAttachedButNotMountedWhereStagedIsRefusedAlongsideTheOthers()
      throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    try (LocalVolumeManager engine = f.open()) {
      Scene s = scene(f, engine);
      long available = engine.capacity().get(0).availableBytes();
      String raw = s.ids().get(2);
      engine.stage(
          new StageRequest(raw, f.kubelet.resolve("staging/raw"), AccessType.BLOCK, "", List.of()));
      f.mounter.unmount(s.staging(1)); // its device stays attached

      assertThatThrownBy(() -> engine.createGroupSnapshot("g", s.ids()))
          .isInstanceOfSatisfying(
              StorageException.class,
              e -> assertThat(e.reason()).isEqualTo(Reason.FAILED_PRECONDITION))
          .as("every member that cannot be frozen is named, each with its reason")
          .hasMessageContaining(
              "volume \""
                  + s.ids().get(1)
                  + "\": its device is attached but its filesystem is not mounted where it was"
                  + " staged, so it cannot be frozen; volume \""
                  + raw
                  + "\": it is a raw block volume in use")
          .message()
          .doesNotContain(s.ids().get(0));
      assertThat(f.mounter.log()).noneMatch(line -> line.contains("freeze"));
      assertNothingLeft(f, engine, available);
    }
  }

  /**
   * A member that is not in use is copied unfrozen: nothing writes to it, and the group holds its
   * lock, so a stage that comes during the copies waits until the group is taken.
   */
  @Test
  void aVolumeNotInUseIsCopiedUnfrozenAndCannotBeStagedUntilTheGroupIsTaken() throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    try (LocalVolumeManager engine = f.open()) {
      Scene s = scene(f, engine);
      Volume cold = engine.createVolume(fs("cold", 20 * MIB));
      Path coldStaging = f.kubelet.resolve("staging/cold");
      List<Boolean> stagedDuringCopies = new ArrayList<>();
      List<CompletableFuture<Void>> stages = new ArrayList<>();
      f.exec.on(
          List.of("cp"),
          command -> {
            if (stages.isEmpty()) {
              stages.add(
                  CompletableFuture.runAsync(
                      () ->
                          engine.stage(
                              new StageRequest(
                                  cold.id(), coldStaging, AccessType.FILESYSTEM, "", List.of()))));
              sleep(300);
            }
            stagedDuringCopies.add(stages.get(0).isDone());
            return EngineFixture.copied(command);
          });

      GroupSnapshot group =
          engine.createGroupSnapshot("g", List.of(s.ids().get(0), cold.id(), s.ids().get(2)));

      assertThat(group.readyToUse()).isTrue();
      assertThat(stagedDuringCopies).as("one answer per copy, none staged").containsOnly(false);
      assertThat(stagedDuringCopies).hasSize(3);
      assertThat(f.mounter.log())
          .filteredOn(line -> line.contains("freeze"))
          .containsExactly("freeze " + s.staging(0), "unfreeze " + s.staging(0));
      stages.get(0).get(20, TimeUnit.SECONDS);
      assertThat(f.mounter.mountAt(coldStaging)).as("staged once the group let go").isPresent();
    }
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @Test
  void aFailedFreezeThawsTheFrozenOnesAndLeavesNothing() throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    try (LocalVolumeManager engine = f.open()) {
      Scene s = scene(f, engine);
      long available = engine.capacity().get(0).availableBytes();
      f.mounter.failNextFreeze(
          s.staging(1), new MountException(MountException.Kind.FAILED, "fsfreeze failed", null));

      assertThatThrownBy(() -> engine.createGroupSnapshot("g", s.ids()))
          .isInstanceOf(StorageException.class)
          .hasMessageContaining("fsfreeze failed");
      assertThat(f.mounter.frozen()).as("the first volume is thawed again").isEmpty();
      assertNothingLeft(f, engine, available);
      // The name is free: a retry that succeeds makes a group of it.
      assertThat(engine.createGroupSnapshot("g", s.ids()).readyToUse()).isTrue();
    }
  }

  @Test
  void aFailedCopyThawsEverythingAndUndoesTheMembersAlreadyCopied() throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    try (LocalVolumeManager engine = f.open()) {
      Scene s = scene(f, engine);
      long available = engine.capacity().get(0).availableBytes();
      List<Set<Path>> copies = new ArrayList<>();
      f.exec.on(
          List.of("cp"),
          command -> {
            copies.add(f.mounter.frozen());
            if (copies.size() == 2) {
              return new ExecResult(command, 1, "", "cp: no space left on device");
            }
            return EngineFixture.copied(command);
          });

      assertThat(reason(() -> engine.createGroupSnapshot("g", s.ids()))).isEqualTo(Reason.INTERNAL);
      assertThat(copies).as("the first copy was made, frozen").hasSize(2);
      assertThat(copies.get(0)).containsOnly(s.staging(0), s.staging(1));
      assertThat(f.mounter.frozen()).isEmpty();
      assertNothingLeft(f, engine, available);
    }
  }

  @Test
  void aPoolWithoutRoomForEveryMemberSaysSoAndKeepsNone() throws Exception {
    EngineFixture f = new EngineFixture(dir, 70 * MIB); // 41 MiB of volumes, room for one copy
    try (LocalVolumeManager engine = f.open()) {
      Scene s = scene(f, engine);
      long available = engine.capacity().get(0).availableBytes();
      assertThat(reason(() -> engine.createGroupSnapshot("g", s.ids())))
          .isEqualTo(Reason.RESOURCE_EXHAUSTED);
      assertThat(f.mounter.log()).noneMatch(line -> line.contains("freeze"));
      assertNothingLeft(f, engine, available);
    }
  }

  @Test
  void aRetryGetsTheSameGroupAndTheNameWithOtherVolumesIsRefused() {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    try (LocalVolumeManager engine = f.open()) {
      Scene s = scene(f, engine);
      GroupSnapshot first = engine.createGroupSnapshot("g", s.ids());
      GroupSnapshot again = engine.createGroupSnapshot("g", reversed(s.ids()));
      assertThat(again.id()).isEqualTo(first.id());
      assertThat(again.members()).isEqualTo(first.members());

      assertThat(reason(() -> engine.createGroupSnapshot("g", s.ids().subList(0, 2))))
          .isEqualTo(Reason.ALREADY_EXISTS);
      assertThat(reason(() -> engine.createGroupSnapshot("h", List.of())))
          .isEqualTo(Reason.INVALID_ARGUMENT);
      assertThat(reason(() -> engine.createGroupSnapshot("", s.ids())))
          .isEqualTo(Reason.INVALID_ARGUMENT);
      List<String> twice = List.of(s.ids().get(0), s.ids().get(0));
      assertThat(reason(() -> engine.createGroupSnapshot("h", twice)))
          .isEqualTo(Reason.INVALID_ARGUMENT);
      assertThatThrownBy(
              () -> engine.createGroupSnapshot("h", List.of(s.ids().get(0), "vol-nothere")))
          .isInstanceOfSatisfying(
              StorageException.class, e -> assertThat(e.reason()).isEqualTo(Reason.NOT_FOUND))
          .as("what csi-snapshotter shows on a VolumeGroupSnapshot whose volumes span nodes")
          .hasMessage(
              "volume \"vol-nothere\" is not on this node \"node-1\": a group snapshot's volumes"
                  + " must all be on one node");
      assertThat(engine.listSnapshots(SnapshotFilter.ALL, "", 0).items()).hasSize(3);
    }
  }

  @Test
  void getAndDeleteCheckTheMembersTheClientNames() {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    try (LocalVolumeManager engine = f.open()) {
      Scene s = scene(f, engine);
      GroupSnapshot group = engine.createGroupSnapshot("g", s.ids());
      List<String> members = group.members().stream().map(Snapshot::id).toList();

      assertThat(engine.getGroupSnapshot(group.id(), List.of())).isEqualTo(group);
      assertThat(engine.getGroupSnapshot(group.id(), reversed(members))).isEqualTo(group);
      assertThat(reason(() -> engine.getGroupSnapshot(group.id(), members.subList(0, 1))))
          .isEqualTo(Reason.INVALID_ARGUMENT);
      assertThat(reason(() -> engine.getGroupSnapshot("group-unknown", List.of())))
          .isEqualTo(Reason.NOT_FOUND);
      assertThat(reason(() -> engine.deleteGroupSnapshot(group.id(), members.subList(1, 3))))
          .isEqualTo(Reason.INVALID_ARGUMENT);
      assertThat(engine.getGroupSnapshot(group.id(), members).readyToUse()).isTrue();

      engine.deleteGroupSnapshot(group.id(), members);
      assertThat(engine.listSnapshots(SnapshotFilter.ALL, "", 0).items()).isEmpty();
      assertThat(reason(() -> engine.getGroupSnapshot(group.id(), List.of())))
          .isEqualTo(Reason.NOT_FOUND);
      engine.deleteGroupSnapshot(group.id(), members); // idempotent
      engine.deleteGroupSnapshot("../../etc", List.of());
    }
  }

  @Test
  void membersAreSnapshotsLikeAnyOtherAndOneDeletedAloneLeavesTheGroupNotReady() {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    try (LocalVolumeManager engine = f.open()) {
      Scene s = scene(f, engine);
      GroupSnapshot group = engine.createGroupSnapshot("g", s.ids());
      Snapshot first = group.members().get(0);

      assertThat(engine.listSnapshots(SnapshotFilter.ALL, "", 0).items())
          .extracting(Snapshot::groupSnapshotId)
          .containsOnly(group.id());
      Volume restored =
          engine.createVolume(
              new VolumeRequest(
                  "restored",
                  20 * MIB,
                  0,
                  "",
                  AccessType.FILESYSTEM,
                  "ext4",
                  new ContentSource.FromSnapshot(first.id()),
                  Map.of()));
      assertThat(restored.source()).isEqualTo(new ContentSource.FromSnapshot(first.id()));

      engine.deleteSnapshot(first.id());
      GroupSnapshot after = engine.getGroupSnapshot(group.id(), List.of());
      assertThat(after.readyToUse()).isFalse();
      assertThat(after.members())
          .extracting(Snapshot::id, Snapshot::readyToUse)
          .containsExactly(
              tuple(first.id(), false),
              tuple(group.members().get(1).id(), true),
              tuple(group.members().get(2).id(), true));
      engine.deleteGroupSnapshot(group.id(), List.of());
      assertThat(engine.listSnapshots(SnapshotFilter.ALL, "", 0).items()).isEmpty();
    }
  }

  @Test
  void aGroupSurvivesARestartAndOneACrashLeftUnfinishedIsRemovedWithItsMembers() throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    String kept;
    String creating;
    String deleting;
    List<String> unfinishedMembers = new ArrayList<>();
    try (LocalVolumeManager engine = f.open()) {
      Scene s = scene(f, engine);
      kept = engine.createGroupSnapshot("kept", s.ids()).id();
      GroupSnapshot c = engine.createGroupSnapshot("creating", s.ids());
      GroupSnapshot d = engine.createGroupSnapshot("deleting", s.ids());
      creating = c.id();
      deleting = d.id();
      Stream.of(c, d).forEach(g -> g.members().forEach(m -> unfinishedMembers.add(m.id())));
    }
    // The states a kill -9 leaves: a create with every member copied but the group not yet READY,
    // a delete that removed one member of three.
    rewriteState(groupRecord(f, creating), "READY", "CREATING");
    rewriteState(groupRecord(f, deleting), "READY", "DELETING");
    Files.delete(snapshotRecord(f, unfinishedMembers.get(3)));
    Files.delete(f.pool.resolve("snapshots/" + unfinishedMembers.get(3) + ".img"));

    try (LocalVolumeManager engine = f.open()) {
      Recovery.Report report = engine.recoveryReports().get(0);
      assertThat(report.unfinishedCreatesRolledBack())
          .as("the group and its 3 members")
          .isEqualTo(4);
      assertThat(report.unfinishedDeletesFinished()).as("the group and 2 members").isEqualTo(3);
      assertThat(report.groupSnapshots()).isEqualTo(1);
      assertThat(report.orphanImagesRemoved()).isZero();
      for (String member : unfinishedMembers) {
        assertThat(snapshotRecord(f, member)).doesNotExist();
        assertThat(f.pool.resolve("snapshots/" + member + ".img")).doesNotExist();
      }
      assertThat(groupRecord(f, creating)).doesNotExist();
      assertThat(groupRecord(f, deleting)).doesNotExist();
      assertThat(engine.getGroupSnapshot(kept, List.of()).readyToUse()).isTrue();
      assertThat(engine.listSnapshots(SnapshotFilter.ALL, "", 0).items()).hasSize(3);
      // 2 x 20 MiB + 1 MiB of volumes, and the kept group's copies of them
      assertThat(engine.capacity().get(0).availableBytes()).isEqualTo((1024 - 82) * MIB);
      // the unfinished create's name is free again
      assertThat(
              engine
                  .createGroupSnapshot(
                      "creating", List.of(engine.listVolumes("", 0).items().get(0).id()))
                  .id())
          .isNotEqualTo(creating);
    }
  }

  private static List<String> reversed(List<String> ids) {
    List<String> copy = new ArrayList<>(ids);
    java.util.Collections.reverse(copy);
    return copy;
  }

  private static Path groupRecord(EngineFixture f, String id) {
    return f.pool.resolve(".soko/groups/" + id + ".json");
  }

  private static Path snapshotRecord(EngineFixture f, String id) {
    return f.pool.resolve(".soko/snapshots/" + id + ".json");
  }

  private static void rewriteState(Path record, String from, String to) throws IOException {
    String text = Files.readString(record);
    Files.writeString(
        record, text.replace("\"state\": \"" + from + "\"", "\"state\": \"" + to + "\""));
  }

  /** No group, no member record or image, every reservation released, no lock held. */
  static void assertNothingLeft(EngineFixture f, LocalVolumeManager engine, long available)
      throws IOException {
    assertThat(engine.listSnapshots(SnapshotFilter.ALL, "", 0).items()).isEmpty();
    try (Stream<Path> images = Files.list(f.pool.resolve("snapshots"));
        Stream<Path> groups = Files.list(f.pool.resolve(".soko/groups"));
        Stream<Path> records = Files.list(f.pool.resolve(".soko/snapshots"))) {
      assertThat(images).isEmpty();
      assertThat(groups).allMatch(p -> p.getFileName().toString().equals("journal"));
      assertThat(records).allMatch(p -> p.getFileName().toString().equals("journal"));
    }
    assertThat(engine.capacity().get(0).availableBytes()).isEqualTo(available);
  }

  /** The fake cp copies for real and notes which filesystems were frozen while it ran. */
  static void copyRecordingFreezes(EngineFixture f, List<Set<Path>> frozenDuringCopies) {
    f.exec.on(
        List.of("cp"),
        command -> {
          frozenDuringCopies.add(f.mounter.frozen());
          return EngineFixture.copied(command);
        });
  }
}
