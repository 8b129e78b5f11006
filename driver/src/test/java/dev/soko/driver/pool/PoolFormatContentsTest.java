package dev.soko.driver.pool;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.exec.FakeExec;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.model.ContentSource;
import dev.soko.driver.state.GroupSnapshotRecord;
import dev.soko.driver.state.Ids;
import dev.soko.driver.state.RecordState;
import dev.soko.driver.state.SnapshotRecord;
import dev.soko.driver.state.VolumeRecord;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a pool of the current format holds, every optional field set: the record fields of each
 * kind, the record states, the journal's operations and the pool's directories. Format 1 is what
 * 0.2.0 writes and reads (0.1.0's layout, plus the fields and the group store 0.2.0 added, which
 * 0.1.0 does not read: docs/operations.md, "Downgrade"). A change here is a change to what an older
 * release finds in a pool: raise {@link PoolFormat#CURRENT} (with a migration) unless the release
 * before reads it without losing anything, and change the lists below with it.
 */
class PoolFormatContentsTest {
  private static final String REASON =
      "what format %d holds; a change reaches the older releases that read it: raise"
          + " PoolFormat.CURRENT unless they read it without losing anything";

  private static final Instant AT = Instant.parse("2026-12-07T00:00:00Z");

  @TempDir Path dir;

  @Test
  void theFormatIsOne() {
    assertThat(PoolFormat.CURRENT).isEqualTo(1);
  }

  @Test
  void aVolumeRecordHoldsTheFieldsOfTheFormat() {
    VolumeRecord record =
        new VolumeRecord(
            Ids.newVolumeId(),
            "pvc-1",
            "fast",
            1 << 20,
            1 << 20,
            AccessType.FILESYSTEM,
            "ext4",
            new ContentSource.FromSnapshot(Ids.newSnapshotId()),
            AT,
            RecordState.READY,
            Map.of("fsType", "ext4"),
            "/staging",
            Optional.of(List.of("noatime")),
            Map.of("writeIOPS", "200"));
    assertThat(record.toFields().keySet())
        .as(REASON, PoolFormat.CURRENT)
        .containsExactly(
            "kind",
            "id",
            "name",
            "pool",
            "capacityBytes",
            "requestedBytes",
            "accessType",
            "fsType",
            "sourceKind",
            "sourceId",
            "createdAt",
            "state",
            "stagedAt",
            "stageFlags",
            "param.fsType",
            "mutable.writeIOPS");
  }

  @Test
  void aSnapshotRecordHoldsTheFieldsOfTheFormat() {
    SnapshotRecord record =
        new SnapshotRecord(
            Ids.newSnapshotId(),
            "snap-1",
            "fast",
            Ids.newVolumeId(),
            1 << 20,
            1 << 20,
            AccessType.FILESYSTEM,
            "ext4",
            AT,
            RecordState.READY,
            Ids.newGroupId(),
            Map.of("fsType", "ext4"));
    assertThat(record.toFields().keySet())
        .as(REASON, PoolFormat.CURRENT)
        .containsExactly(
            "kind",
            "id",
            "name",
            "pool",
            "sourceVolumeId",
            "sizeBytes",
            "restoreSizeBytes",
            "accessType",
            "fsType",
            "createdAt",
            "state",
            "groupId",
            "param.fsType");
  }

  @Test
  void aGroupRecordHoldsTheFieldsOfTheFormat() {
    GroupSnapshotRecord record =
        new GroupSnapshotRecord(
            Ids.newGroupId(),
            "group-1",
            "fast",
            List.of(Ids.newVolumeId()),
            List.of(Ids.newSnapshotId()),
            AT,
            RecordState.READY,
            "spanning-1");
    assertThat(record.toFields().keySet())
        .as(REASON, PoolFormat.CURRENT)
        .containsExactly(
            "kind",
            "id",
            "name",
            "pool",
            "sourceVolumeIds",
            "snapshotIds",
            "createdAt",
            "state",
            "spanningId");
  }

  @Test
  void recordStatesAndJournalOperationsAreThoseOfTheFormat() throws Exception {
    assertThat(RecordState.values())
        .as(REASON, PoolFormat.CURRENT)
        .containsExactly(RecordState.CREATING, RecordState.READY, RecordState.DELETING);
    Object[] ops = Class.forName("dev.soko.driver.state.Journal$Op").getEnumConstants();
    assertThat(Arrays.stream(ops).map(Object::toString))
        .as(REASON, PoolFormat.CURRENT)
        .containsExactly("PUT", "DELETE");
  }

  @Test
  void aPoolHoldsTheDirectoriesOfTheFormat() throws Exception {
    Path root = Files.createDirectories(dir.resolve("pool"));
    Pool.open(
            new PoolConfig("fast", root, 1 << 20, 1.0, Set.of("ext4")),
            new VolumeLayout("images", ".img"),
            new FakeExec())
        .close();
    try (Stream<Path> entries = Files.walk(root)) {
      assertThat(entries.map(p -> root.relativize(p).toString()).filter(p -> !p.isEmpty()))
          .as(REASON, PoolFormat.CURRENT)
          .containsExactlyInAnyOrder(
              "images",
              "snapshots",
              ".soko",
              ".soko/format",
              ".soko/volumes",
              ".soko/volumes/journal",
              ".soko/snapshots",
              ".soko/snapshots/journal",
              ".soko/groups",
              ".soko/groups/journal");
    }
  }
}
