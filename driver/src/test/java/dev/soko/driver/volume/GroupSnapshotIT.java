package dev.soko.driver.volume;

import static dev.soko.driver.volume.EngineFixture.reason;
import static dev.soko.driver.volume.HostFixture.MIB;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.soko.driver.model.AccessType;
import dev.soko.driver.model.ContentSource;
import dev.soko.driver.model.GroupSnapshot;
import dev.soko.driver.model.Snapshot;
import dev.soko.driver.model.Volume;
import dev.soko.driver.volume.StorageException.Reason;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Group snapshots on real loop devices, filesystems and mounts (needs root; fails without it): an
 * xfs and an ext4 volume staged and published with files in them, snapshotted together while both
 * are frozen, and restored.
 */
class GroupSnapshotIT {
  @RegisterExtension final HostFixture host = new HostFixture();

  private Path staging(String name) {
    return host.kubelet.resolve("plugins/csi.soko.dev/staging/" + name);
  }

  private Path target(String name) {
    return host.kubelet.resolve("pods/pod-" + name + "/volumes/" + name + "/mount");
  }

  private Volume published(VolumeManager engine, String name, String pool, String fsType) {
    long bytes = fsType.equals("xfs") ? 300 * MIB : 32 * MIB;
    Volume v =
        engine.createVolume(
            new VolumeRequest(
                name,
                bytes,
                0,
                pool,
                AccessType.FILESYSTEM,
                fsType,
                ContentSource.EMPTY,
                Map.of()));
    engine.stage(new StageRequest(v.id(), staging(name), v.accessType(), "", List.of()));
    engine.publish(
        new PublishRequest(v.id(), staging(name), target(name), false, v.accessType(), List.of()));
    return v;
  }

  private Volume restore(VolumeManager engine, Snapshot member, Volume source) {
    Volume v =
        engine.createVolume(
            new VolumeRequest(
                "restored-" + source.name(),
                source.capacityBytes(),
                0,
                source.pool(),
                AccessType.FILESYSTEM,
                source.fsType(),
                new ContentSource.FromSnapshot(member.id()),
                Map.of()));
    engine.stage(new StageRequest(v.id(), staging(v.name()), v.accessType(), "", List.of()));
    engine.publish(
        new PublishRequest(
            v.id(), staging(v.name()), target(v.name()), false, v.accessType(), List.of()));
    return v;
  }

  private void teardown(VolumeManager engine, Volume v) {
    engine.unpublish(v.id(), target(v.name()));
    engine.unstage(v.id(), staging(v.name()));
    engine.deleteVolume(v.id());
  }

  /**
   * A write that must not hang: a filesystem left frozen would block it for ever, so it runs with a
   * deadline.
   */
  private static void write(Path file, String text) throws Exception {
    CompletableFuture.runAsync(
            () -> {
              try {
                Files.writeString(file, text);
                try (var channel = java.nio.channels.FileChannel.open(file)) {
                  channel.force(true);
                }
              } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
              }
            })
        .get(20, TimeUnit.SECONDS);
  }

  @Test
  void bothMembersRestoreTheDataOfOneInstantAndTheGroupGoesAway() throws Exception {
    try (LocalVolumeManager engine = host.open()) {
      Volume data = published(engine, "data", "xfs", "xfs");
      Volume log = published(engine, "log", "xfs", "ext4");
      write(target("data").resolve("table"), "row 1");
      write(target("log").resolve("wal"), "commit 1");

      GroupSnapshot group = engine.createGroupSnapshot("vgs-1", List.of(data.id(), log.id()));
      // Both filesystems were thawed: writing goes on, and none of it is in the snapshot.
      write(target("data").resolve("table"), "row 2");
      write(target("log").resolve("wal"), "commit 2");

      assertThat(group.readyToUse()).isTrue();
      assertThat(group.members())
          .extracting(Snapshot::sourceVolumeId, Snapshot::groupSnapshotId)
          .containsExactly(
              org.assertj.core.groups.Tuple.tuple(data.id(), group.id()),
              org.assertj.core.groups.Tuple.tuple(log.id(), group.id()));
      assertThat(engine.getGroupSnapshot(group.id(), List.of())).isEqualTo(group);

      Volume dataBack = restore(engine, group.members().get(0), data);
      Volume logBack = restore(engine, group.members().get(1), log);
      assertThat(Files.readString(target(dataBack.name()).resolve("table"))).isEqualTo("row 1");
      assertThat(Files.readString(target(logBack.name()).resolve("wal"))).isEqualTo("commit 1");

      // A retry gets the same group; the name with other volumes is refused.
      assertThat(engine.createGroupSnapshot("vgs-1", List.of(log.id(), data.id())).id())
          .isEqualTo(group.id());
      assertThat(reason(() -> engine.createGroupSnapshot("vgs-1", List.of(data.id()))))
          .isEqualTo(Reason.ALREADY_EXISTS);

      for (Volume v : List.of(dataBack, logBack)) {
        teardown(engine, v);
      }
      List<String> members = group.members().stream().map(Snapshot::id).toList();
      engine.deleteGroupSnapshot(group.id(), members);
      engine.deleteGroupSnapshot(group.id(), members);
      assertThat(engine.listSnapshots(SnapshotFilter.ALL, "", 0).items()).isEmpty();
      assertThat(reason(() -> engine.getGroupSnapshot(group.id(), List.of())))
          .isEqualTo(Reason.NOT_FOUND);
      try (var left = Files.list(host.xfsPool.resolve("snapshots"))) {
        assertThat(left).isEmpty();
      }
      teardown(engine, data);
      teardown(engine, log);
    }
    assertThat(host.loopsBelowBase()).hasSize(1); // only the XFS pool's own device
    assertThat(host.mountsBelowBase()).hasSize(1);
  }

  @Test
  void volumesOfTwoPoolsAreRefusedAndNothingIsFrozenOrMade() throws Exception {
    try (LocalVolumeManager engine = host.open()) {
      Volume fast = published(engine, "fast", "xfs", "ext4");
      Volume slow = published(engine, "slow", "host", "ext4");
      assertThatThrownBy(() -> engine.createGroupSnapshot("mixed", List.of(fast.id(), slow.id())))
          .isInstanceOfSatisfying(
              StorageException.class,
              e -> assertThat(e.reason()).isEqualTo(Reason.INVALID_ARGUMENT))
          .hasMessageContaining("one pool")
          .hasMessageContaining("host, xfs");
      write(target("fast").resolve("f"), "still writable");
      write(target("slow").resolve("f"), "still writable");
      assertThat(engine.listSnapshots(SnapshotFilter.ALL, "", 0).items()).isEmpty();
      teardown(engine, fast);
      teardown(engine, slow);
    }
  }

  @Test
  void aGroupACrashLeftCreatingIsRemovedWithItsMembersAtTheNextOpen() throws Exception {
    List<String> members = new ArrayList<>();
    String groupId;
    Volume data;
    Volume log;
    try (LocalVolumeManager engine = host.open()) {
      data = published(engine, "data", "xfs", "ext4");
      log = published(engine, "log", "xfs", "ext4");
      GroupSnapshot group = engine.createGroupSnapshot("vgs", List.of(data.id(), log.id()));
      groupId = group.id();
      group.members().forEach(m -> members.add(m.id()));
    }
    // What a kill -9 after the members were copied and before the group was READY leaves.
    Path record = host.xfsPool.resolve(".soko/groups/" + groupId + ".json");
    Files.writeString(
        record,
        Files.readString(record).replace("\"state\": \"READY\"", "\"state\": \"CREATING\""));

    try (LocalVolumeManager engine = host.open()) {
      assertThat(engine.recoveryReports().get(0).unfinishedCreatesRolledBack()).isEqualTo(3);
      assertThat(record).doesNotExist();
      for (String member : members) {
        assertThat(host.xfsPool.resolve("snapshots/" + member + ".img")).doesNotExist();
        assertThat(host.xfsPool.resolve(".soko/snapshots/" + member + ".json")).doesNotExist();
      }
      assertThat(engine.listSnapshots(SnapshotFilter.ALL, "", 0).items()).isEmpty();
      // The client, never answered, retries by name and gets a new group.
      GroupSnapshot retried = engine.createGroupSnapshot("vgs", List.of(data.id(), log.id()));
      assertThat(retried.id()).isNotEqualTo(groupId);
      engine.deleteGroupSnapshot(retried.id(), List.of());
      teardown(engine, data);
      teardown(engine, log);
    }
  }
}
