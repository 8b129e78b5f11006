package dev.soko.driver.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.soko.driver.model.AccessType;
import dev.soko.driver.model.ContentSource;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RecordStoreTest {
  @TempDir Path dir;

  private RecordStore store() {
    return new RecordStore(dir.resolve("volumes"), Ids::isVolumeId);
  }

  private static VolumeRecord volume(String id) {
    return new VolumeRecord(
        id,
        "pvc-1",
        "fast",
        1 << 30,
        1L << 29,
        AccessType.FILESYSTEM,
        "ext4",
        new ContentSource.FromSnapshot(Ids.newSnapshotId()),
        Instant.parse("2025-01-02T03:04:05Z"),
        RecordState.READY,
        Map.of("pool", "fast", "fsType", "ext4"),
        "/var/lib/kubelet/staging/x",
        Optional.of(List.of("noatime", "discard")),
        Map.of("readIOPS", "200", "writeBytesPerSecond", "4194304"));
  }

  @Test
  void writesReadsAndReplacesRecords() throws Exception {
    RecordStore store = store();
    VolumeRecord record = volume(Ids.newVolumeId());
    store.write(record.id(), record.toFields());
    assertThat(VolumeRecord.fromFields(store.read(record.id()).orElseThrow())).isEqualTo(record);

    VolumeRecord grown = record.withCapacity(2L << 30, 3L << 29);
    store.write(record.id(), grown.toFields());
    assertThat(VolumeRecord.fromFields(store.read(record.id()).orElseThrow())).isEqualTo(grown);
    assertThat(store.ids()).containsExactly(record.id());
    store.close();
    try (var files = Files.list(store.dir())) {
      assertThat(files.map(p -> p.getFileName().toString()))
          .containsExactlyInAnyOrder(record.id() + ".json", "journal");
    }
    assertThat(
            VolumeRecord.fromFields(
                FlatJson.parse(Files.readString(store.dir().resolve(record.id() + ".json")))))
        .isEqualTo(grown);
  }

  @Test
  void mutableParametersAreKeptReplacedWholeAndAbsentFromOlderRecords() {
    VolumeRecord record = volume(Ids.newVolumeId());
    assertThat(record.toFields())
        .containsEntry("mutable.readIOPS", "200")
        .containsEntry("mutable.writeBytesPerSecond", "4194304");
    assertThat(VolumeRecord.fromFields(record.toFields())).isEqualTo(record);

    VolumeRecord modified = record.withMutableParameters(Map.of("writeIOPS", "50"));
    assertThat(VolumeRecord.fromFields(modified.toFields()).mutableParameters())
        .isEqualTo(Map.of("writeIOPS", "50"));

    Map<String, String> older = new java.util.LinkedHashMap<>(record.toFields());
    older.keySet().removeIf(k -> k.startsWith("mutable."));
    assertThat(VolumeRecord.fromFields(older).mutableParameters()).isEmpty();
  }

  @Test
  void stageFlagsAreKeptAndARecordWithoutThemHasThemUnknown() {
    VolumeRecord record = volume(Ids.newVolumeId());
    VolumeRecord noFlags = record.withStaged(record.stagedAt(), List.of());
    assertThat(VolumeRecord.fromFields(noFlags.toFields()).stageFlags()).contains(List.of());
    assertThat(VolumeRecord.fromFields(record.toFields()).stageFlags())
        .contains(List.of("noatime", "discard"));

    // What a driver that did not record the flags wrote: staged, flags unknown.
    Map<String, String> older = new java.util.LinkedHashMap<>(record.toFields());
    older.remove("stageFlags");
    VolumeRecord read = VolumeRecord.fromFields(older);
    assertThat(read.stagedAt()).isEqualTo("/var/lib/kubelet/staging/x");
    assertThat(read.stageFlags()).isEmpty();
    assertThat(read.withStagedAt("").stageFlags()).as("unstaged").isEmpty();
  }

  @Test
  void whatWasAcknowledgedSurvivesACrashBeforeAnyCheckpoint() {
    RecordStore store = store();
    VolumeRecord kept = volume(Ids.newVolumeId());
    VolumeRecord grown = volume(Ids.newVolumeId());
    VolumeRecord gone = volume(Ids.newVolumeId());
    store.write(kept.id(), kept.toFields());
    store.write(grown.id(), grown.toFields());
    store.write(grown.id(), grown.withCapacity(5L << 30, 5L << 30).toFields());
    store.write(gone.id(), gone.toFields());
    store.delete(gone.id());
    // No close: the process dies here; the record files were never written.
    assertThat(store.dir().resolve(kept.id() + ".json")).doesNotExist();

    RecordStore reopened = store();
    assertThat(reopened.ids()).containsExactlyInAnyOrder(kept.id(), grown.id());
    assertThat(VolumeRecord.fromFields(reopened.read(grown.id()).orElseThrow()).capacityBytes())
        .isEqualTo(5L << 30);
    assertThat(reopened.replayedFromJournal(kept.id())).isTrue();
    // Opening folded the journal into the files: a third start reads them, replays nothing.
    assertThat(store.dir().resolve(kept.id() + ".json")).exists();
    RecordStore third = store();
    assertThat(third.ids()).containsExactlyInAnyOrder(kept.id(), grown.id());
    assertThat(third.replayedFromJournal(kept.id())).isFalse();
  }

  @Test
  void aFullJournalIsCheckpointedAndWritingGoesOn() {
    java.util.List<String> seen = new java.util.ArrayList<>();
    RecordStore store =
        new RecordStore(dir.resolve("volumes"), Ids::isVolumeId, seen::add, 16 * 1024);
    java.util.List<String> ids = new java.util.ArrayList<>();
    for (int i = 0; i < 100; i++) { // ~40 KiB of entries through a 12 KiB journal
      VolumeRecord record = volume(Ids.newVolumeId());
      store.write(record.id(), record.toFields());
      ids.add(record.id());
      if (i % 2 == 1) {
        store.delete(ids.remove(0));
      }
    }
    assertThat(seen).isNotEmpty(); // checkpoints ran and announced the records they wrote
    RecordStore reopened =
        new RecordStore(dir.resolve("volumes"), Ids::isVolumeId, id -> {}, 16 * 1024);
    assertThat(reopened.ids()).containsExactlyInAnyOrderElementsOf(ids);
  }

  @Test
  void concurrentWritersAllGetDurableRecords() throws Exception {
    RecordStore store = store();
    java.util.Set<String> written = java.util.concurrent.ConcurrentHashMap.newKeySet();
    var pool = java.util.concurrent.Executors.newFixedThreadPool(8);
    java.util.List<java.util.concurrent.Future<?>> futures = new java.util.ArrayList<>();
    for (int t = 0; t < 8; t++) {
      futures.add(
          pool.submit(
              () -> {
                for (int i = 0; i < 50; i++) {
                  VolumeRecord record = volume(Ids.newVolumeId());
                  store.write(record.id(), record.toFields());
                  written.add(record.id());
                }
              }));
    }
    for (var future : futures) {
      future.get();
    }
    pool.shutdown();
    assertThat(store().ids()).containsExactlyInAnyOrderElementsOf(written).hasSize(400);
  }

  @Test
  void unknownRecordIsEmptyAndDeleteIsIdempotent() {
    RecordStore store = store();
    String id = Ids.newVolumeId();
    assertThat(store.read(id)).isEmpty();
    store.delete(id);
    store.write(id, volume(id).toFields());
    store.delete(id);
    assertThat(store.ids()).isEmpty();
  }

  @Test
  void refusesIdsOutsideTheAlphabet() {
    RecordStore store = store();
    assertThatThrownBy(() -> store.write("../escape", Map.of()))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> store.read("/etc/passwd"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(Files.exists(dir.resolve("escape.json"))).isFalse();
  }

  @Test
  void tempFilesFromInterruptedWritesAreIgnoredAndRemoved() throws Exception {
    Path volumes = Files.createDirectories(dir.resolve("volumes"));
    String id = Ids.newVolumeId();
    Files.writeString(volumes.resolve("." + id + ".json.tmp"), "{\"id\": \"half");
    Files.writeString(volumes.resolve("stray.txt"), "x");
    RecordStore store = store();
    assertThat(store.ids()).isEmpty();
    assertThat(store.removeTempFiles()).isEqualTo(1);
    assertThat(Files.exists(store.dir().resolve("stray.txt"))).isTrue();
  }

  @Test
  void corruptRecordIsReportedAndQuarantinedNotDeleted() throws Exception {
    Path volumes = Files.createDirectories(dir.resolve("volumes"));
    String garbage = Ids.newVolumeId();
    String notUtf8 = Ids.newVolumeId();
    Files.writeString(volumes.resolve(garbage + ".json"), "garbage");
    Files.write(volumes.resolve(notUtf8 + ".json"), new byte[] {(byte) 0xff, (byte) 0xfe, '{'});
    RecordStore store = store();
    assertThat(store.ids()).containsExactlyInAnyOrder(garbage, notUtf8);
    for (String id : java.util.List.of(garbage, notUtf8)) {
      assertThatThrownBy(() -> store.read(id)).isInstanceOf(IllegalArgumentException.class);
      Path aside = store.quarantine(id);
      assertThat(aside).exists();
    }
    assertThat(store.ids()).isEmpty();
    assertThat(store().ids()).isEmpty();
  }

  @Test
  void snapshotRecordsRoundTrip() {
    RecordStore store = new RecordStore(dir.resolve("snapshots"), Ids::isSnapshotId);
    SnapshotRecord record =
        new SnapshotRecord(
            Ids.newSnapshotId(),
            "snap-a",
            "fast",
            Ids.newVolumeId(),
            123L << 20,
            100L << 20,
            AccessType.BLOCK,
            "",
            Instant.parse("2025-01-02T03:04:05Z"),
            RecordState.CREATING,
            "",
            Map.of());
    store.write(record.id(), record.toFields());
    assertThat(SnapshotRecord.fromFields(store.read(record.id()).orElseThrow())).isEqualTo(record);
  }

  @Test
  void aMembersGroupIsStoredOnlyWhenSetAndOlderRecordsReadAsIndependent() {
    SnapshotRecord alone =
        new SnapshotRecord(
            Ids.newSnapshotId(),
            "snap-a",
            "fast",
            Ids.newVolumeId(),
            1L << 20,
            1L << 20,
            AccessType.BLOCK,
            "",
            Instant.parse("2025-01-02T03:04:05Z"),
            RecordState.READY,
            "",
            Map.of());
    assertThat(alone.toFields()).doesNotContainKey("groupId");
    assertThat(SnapshotRecord.fromFields(alone.toFields()).groupId()).isEmpty();

    String group = Ids.newGroupId();
    SnapshotRecord member =
        new SnapshotRecord(
            alone.id(),
            group + "/" + alone.sourceVolumeId(),
            "fast",
            alone.sourceVolumeId(),
            1L << 20,
            1L << 20,
            AccessType.BLOCK,
            "",
            alone.createdAt(),
            RecordState.READY,
            group,
            Map.of());
    assertThat(SnapshotRecord.fromFields(member.toFields())).isEqualTo(member);
    Map<String, String> bad = new java.util.HashMap<>(member.toFields());
    bad.put("groupId", "../x");
    assertThatThrownBy(() -> SnapshotRecord.fromFields(bad)).hasMessageContaining("bad group id");
  }

  @Test
  void groupRecordsRoundTripAndEveryIdInThemIsChecked() {
    RecordStore store = new RecordStore(dir.resolve("groups"), Ids::isGroupId);
    GroupSnapshotRecord record =
        new GroupSnapshotRecord(
            Ids.newGroupId(),
            "group-of-two",
            "fast",
            List.of(Ids.newVolumeId(), Ids.newVolumeId()),
            List.of(Ids.newSnapshotId(), Ids.newSnapshotId()),
            Instant.parse("2025-01-02T03:04:05Z"),
            RecordState.CREATING);
    store.write(record.id(), record.toFields());
    assertThat(GroupSnapshotRecord.fromFields(store.read(record.id()).orElseThrow()))
        .isEqualTo(record);

    for (var field :
        List.of(
            Map.entry("id", "../x"),
            Map.entry("id", Ids.newSnapshotId()),
            Map.entry("snapshotIds", record.snapshotIds().get(0) + ",../../images/vol-x"),
            Map.entry("snapshotIds", record.snapshotIds().get(0)),
            Map.entry("snapshotIds", ""),
            Map.entry("sourceVolumeIds", record.sourceVolumeIds().get(0) + ",/etc"),
            Map.entry(
                "snapshotIds", record.snapshotIds().get(0) + "," + record.snapshotIds().get(0)))) {
      Map<String, String> fields = new java.util.HashMap<>(record.toFields());
      fields.put(field.getKey(), field.getValue());
      assertThatThrownBy(() -> GroupSnapshotRecord.fromFields(fields))
          .as("%s = %s", field.getKey(), field.getValue())
          .isInstanceOf(IllegalArgumentException.class);
    }
  }

  @Test
  void recordsMissingFieldsAreRejected() {
    assertThatThrownBy(() -> VolumeRecord.fromFields(Map.of("id", Ids.newVolumeId())))
        .hasMessageContaining("lacks field");
    Map<String, String> fields = new java.util.HashMap<>(volume(Ids.newVolumeId()).toFields());
    fields.put("id", "../x");
    assertThatThrownBy(() -> VolumeRecord.fromFields(fields)).hasMessageContaining("bad volume id");
  }
}
