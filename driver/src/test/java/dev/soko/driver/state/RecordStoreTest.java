package dev.soko.driver.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.soko.driver.volume.AccessType;
import dev.soko.driver.volume.ContentSource;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
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
        AccessType.FILESYSTEM,
        "ext4",
        new ContentSource.FromSnapshot(Ids.newSnapshotId()),
        Instant.parse("2025-01-02T03:04:05Z"),
        RecordState.READY,
        Map.of("pool", "fast", "fsType", "ext4"),
        "/var/lib/kubelet/staging/x");
  }

  @Test
  void writesReadsAndReplacesRecords() throws Exception {
    RecordStore store = store();
    VolumeRecord record = volume(Ids.newVolumeId());
    store.write(record.id(), record.toFields());
    assertThat(VolumeRecord.fromFields(store.read(record.id()).orElseThrow())).isEqualTo(record);

    VolumeRecord grown = record.withCapacity(2L << 30);
    store.write(record.id(), grown.toFields());
    assertThat(VolumeRecord.fromFields(store.read(record.id()).orElseThrow())).isEqualTo(grown);
    assertThat(store.ids()).containsExactly(record.id());
    try (var files = Files.list(store.dir())) {
      assertThat(files).hasSize(1);
    }
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
    RecordStore store = store();
    String id = Ids.newVolumeId();
    Files.writeString(store.dir().resolve("." + id + ".json.tmp"), "{\"id\": \"half");
    Files.writeString(store.dir().resolve("stray.txt"), "x");
    assertThat(store.ids()).isEmpty();
    assertThat(store.removeTempFiles()).isEqualTo(1);
    assertThat(Files.exists(store.dir().resolve("stray.txt"))).isTrue();
  }

  @Test
  void corruptRecordIsReportedAndQuarantinedNotDeleted() throws Exception {
    RecordStore store = store();
    String id = Ids.newVolumeId();
    Files.writeString(store.dir().resolve(id + ".json"), "garbage");
    assertThatThrownBy(() -> store.read(id)).isInstanceOf(IllegalArgumentException.class);
    Path aside = store.quarantine(id);
    assertThat(aside).exists();
    assertThat(store.ids()).isEmpty();
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
            AccessType.BLOCK,
            "",
            Instant.parse("2025-01-02T03:04:05Z"),
            RecordState.CREATING);
    store.write(record.id(), record.toFields());
    assertThat(SnapshotRecord.fromFields(store.read(record.id()).orElseThrow())).isEqualTo(record);
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
