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
import java.time.Duration;
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
 * are frozen, and restored; under a writer that never syncs, each group restores to one instant; a
 * raw block volume in use is refused.
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
    return published(engine, name, pool, fsType, fsType.equals("xfs") ? 300 * MIB : 32 * MIB);
  }

  private Volume published(
      VolumeManager engine, String name, String pool, String fsType, long bytes) {
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
    return restore(engine, member, source, "");
  }

  private Volume restore(VolumeManager engine, Snapshot member, Volume source, String suffix) {
    Volume v =
        engine.createVolume(
            new VolumeRequest(
                "restored-" + source.name() + suffix,
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

  /**
   * The claim itself: a writer appends numbered records to a data file and then to a log file on
   * two volumes, without fsync and without pause, while three groups are taken. Each group restores
   * to a pair in which the log is the data's last record or one behind, and which holds every
   * record written before the group was asked for. Nothing is synced by the writer, so only the
   * freeze (which flushes each filesystem and stops its writes) puts those records in the copies.
   */
  @Test
  void groupsTakenUnderAnUnsyncedWriterRestoreToOneInstant() throws Exception {
    try (LocalVolumeManager engine = host.open()) {
      Volume data = published(engine, "data", "xfs", "xfs");
      Volume log = published(engine, "log", "xfs", "ext4", 128 * MIB);
      List<long[]> restoredPairs = new ArrayList<>();
      try (RecordPairWriter writer =
          new RecordPairWriter(target("data").resolve("table"), target("log").resolve("wal"))) {
        long writtenBefore = 0;
        for (int round = 1; round <= 3; round++) {
          writer.awaitMoreThan(writtenBefore + 1000, Duration.ofSeconds(20));
          long before = writer.logRecords();
          assertThat(before)
              .as("the writer ran on since the last group")
              .isGreaterThan(writtenBefore);
          GroupSnapshot group =
              engine.createGroupSnapshot("vgs-" + round, List.of(data.id(), log.id()));
          long after = writer.dataRecords();
          long[] pair = restoredPair(engine, group, data, log, round);
          restoredPairs.add(pair);
          assertThat(pair[0] - pair[1])
              .as("round %d: data %d, log %d", round, pair[0], pair[1])
              .isBetween(0L, 1L);
          assertThat(pair[1])
              .as("round %d: every record written before the group was asked for", round)
              .isGreaterThanOrEqualTo(before);
          assertThat(pair[0])
              .as("round %d: none written after it answered", round)
              .isLessThanOrEqualTo(after);
          engine.deleteGroupSnapshot(group.id(), List.of());
          writtenBefore = after;
        }
      }
      assertThat(restoredPairs)
          .extracting(pair -> pair[1])
          .as("three successive groups hold strictly more records")
          .isSorted()
          .doesNotHaveDuplicates();
      teardown(engine, data);
      teardown(engine, log);
    }
  }

  /** The last intact record in each of the group's restored data and log, in that order. */
  private long[] restoredPair(
      LocalVolumeManager engine, GroupSnapshot group, Volume data, Volume log, int round)
      throws Exception {
    Volume dataBack = restore(engine, group.members().get(0), data, "-" + round);
    Volume logBack = restore(engine, group.members().get(1), log, "-" + round);
    long[] pair = {
      RecordPairWriter.intactRecords(target(dataBack.name()).resolve("table")),
      RecordPairWriter.intactRecords(target(logBack.name()).resolve("wal"))
    };
    teardown(engine, dataBack);
    teardown(engine, logBack);
    return pair;
  }

  /**
   * A raw block volume in use has no filesystem to freeze: a group with it is refused, naming it,
   * before anything is frozen or made; a volume not in use (no writer, its lock held) is taken.
   */
  @Test
  void aRawBlockVolumeInUseIsRefusedAndAnUnstagedVolumeIsTaken() throws Exception {
    try (LocalVolumeManager engine = host.open()) {
      Volume data = published(engine, "data", "xfs", "ext4");
      Volume raw =
          engine.createVolume(
              new VolumeRequest(
                  "raw", 16 * MIB, 0, "xfs", AccessType.BLOCK, "", ContentSource.EMPTY, Map.of()));
      engine.stage(new StageRequest(raw.id(), staging("raw"), AccessType.BLOCK, "", List.of()));

      assertThatThrownBy(() -> engine.createGroupSnapshot("g", List.of(data.id(), raw.id())))
          .isInstanceOfSatisfying(
              StorageException.class,
              e -> assertThat(e.reason()).isEqualTo(Reason.FAILED_PRECONDITION))
          .hasMessageContaining("volume \"" + raw.id() + "\": it is a raw block volume in use")
          .message()
          .doesNotContain(data.id());
      write(target("data").resolve("f"), "still writable");
      assertThat(engine.listSnapshots(SnapshotFilter.ALL, "", 0).items()).isEmpty();
      try (var left = Files.list(host.xfsPool.resolve("snapshots"))) {
        assertThat(left).isEmpty();
      }

      // Unstaged, the same volume has no writer and is taken beside the frozen one.
      engine.unstage(raw.id(), staging("raw"));
      write(target("data").resolve("f"), "in the group");
      GroupSnapshot group = engine.createGroupSnapshot("g", List.of(data.id(), raw.id()));
      assertThat(group.readyToUse()).isTrue();
      Volume dataBack = restore(engine, group.members().get(0), data, "");
      assertThat(Files.readString(target(dataBack.name()).resolve("f"))).isEqualTo("in the group");
      teardown(engine, dataBack);
      engine.deleteGroupSnapshot(group.id(), List.of());
      engine.deleteVolume(raw.id());
      teardown(engine, data);
    }
    assertThat(host.loopsBelowBase()).hasSize(1);
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
