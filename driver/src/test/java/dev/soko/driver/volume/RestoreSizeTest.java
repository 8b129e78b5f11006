package dev.soko.driver.volume;

import static dev.soko.driver.volume.EngineFixture.MIB;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.soko.driver.model.AccessType;
import dev.soko.driver.model.ContentSource;
import dev.soko.driver.model.Snapshot;
import dev.soko.driver.model.Volume;
import dev.soko.driver.state.FlatJson;
import dev.soko.driver.volume.StorageException.Reason;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A volume's capacity is what it really holds (rounded up to its type's floor); a snapshot's size
 * is the capacity its source was asked for, so that Kubernetes, which refuses a restore claim
 * smaller than the snapshot's size, restores into a claim of the source's own request, as it clones
 * into one.
 */
class RestoreSizeTest {
  private static final byte[] PAYLOAD = "payload".getBytes(StandardCharsets.UTF_8);

  @TempDir Path dir;

  @Test
  void aSnapshotOfA1MiExt4VolumeReports1MiAndRestoresIntoA1MiClaim() throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    try (LocalVolumeManager engine = f.open()) {
      roundTrip(f, engine, request("ext4", AccessType.FILESYSTEM, MIB), 16 * MIB);
    }
  }

  @Test
  void aSnapshotOfA64MiXfsVolumeReports64MiAndRestoresIntoA64MiClaim() throws Exception {
    EngineFixture f = new EngineFixture(dir, 2048 * MIB);
    try (LocalVolumeManager engine = f.open()) {
      roundTrip(f, engine, request("xfs", AccessType.FILESYSTEM, 64 * MIB), 300 * MIB);
    }
  }

  /** Block volumes have no floor but whole MiB: 1500Ki becomes 2 MiB. */
  @Test
  void aSnapshotOfA1500KiBlockVolumeReports1500KiAndRestoresIntoA1500KiClaim() throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    try (LocalVolumeManager engine = f.open()) {
      roundTrip(f, engine, request("", AccessType.BLOCK, 1500 * 1024), 2 * MIB);
    }
  }

  /**
   * Creates a volume of {@code source}'s request, snapshots it, and restores and clones it into
   * claims of that same request: each gets the floor-rounded capacity and the source's bytes.
   */
  private static void roundTrip(
      EngineFixture f, LocalVolumeManager engine, VolumeRequest source, long rounded)
      throws Exception {
    long asked = source.requiredBytes();
    Volume volume = engine.createVolume(source);
    assertThat(volume.capacityBytes()).as("what the volume really holds").isEqualTo(rounded);
    Files.write(f.image(volume.id()), PAYLOAD, StandardOpenOption.WRITE);

    Snapshot snapshot = engine.createSnapshot("snap", volume.id());
    assertThat(snapshot.sizeBytes()).as("the source's request").isEqualTo(asked);
    assertThat(engine.createSnapshot("snap", volume.id())).isEqualTo(snapshot);
    assertThat(engine.listSnapshots(SnapshotFilter.ALL, "", 0).items()).containsExactly(snapshot);

    VolumeRequest restore =
        copyOf(source, "restored", new ContentSource.FromSnapshot(snapshot.id()));
    Volume restored = engine.createVolume(restore);
    assertThat(restored.capacityBytes()).isEqualTo(rounded);
    assertThat(Files.size(f.image(restored.id()))).isEqualTo(rounded);
    assertThat(head(f, restored)).isEqualTo(PAYLOAD);
    assertThat(engine.createVolume(restore).id()).as("a repeat").isEqualTo(restored.id());
    assertThat(engine.createSnapshot("snap-of-restored", restored.id()).sizeBytes())
        .as("the restore's own request")
        .isEqualTo(asked);

    Volume clone =
        engine.createVolume(copyOf(source, "clone", new ContentSource.FromVolume(volume.id())));
    assertThat(clone.capacityBytes()).isEqualTo(rounded);
    assertThat(head(f, clone)).isEqualTo(PAYLOAD);
  }

  @Test
  void aRestoreAskingLessThanTheSnapshotHoldsGetsTheSnapshotsSize() throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    try (LocalVolumeManager engine = f.open()) {
      Volume volume = engine.createVolume(request("ext4", AccessType.FILESYSTEM, MIB));
      engine.expandVolume(volume.id(), 40 * MIB, 0);
      Files.write(f.image(volume.id()), PAYLOAD, StandardOpenOption.WRITE);
      Snapshot snapshot = engine.createSnapshot("snap", volume.id());
      assertThat(snapshot.sizeBytes()).isEqualTo(40 * MIB);

      // What Kubernetes would refuse (it is below the snapshot's size) still never truncates.
      Volume restored =
          engine.createVolume(
              copyOf(
                  request("ext4", AccessType.FILESYSTEM, MIB),
                  "restored",
                  new ContentSource.FromSnapshot(snapshot.id())));
      assertThat(restored.capacityBytes()).isEqualTo(40 * MIB);
      assertThat(Files.size(f.image(restored.id()))).isEqualTo(40 * MIB);
      assertThat(head(f, restored)).isEqualTo(PAYLOAD);
    }
  }

  @Test
  void aLimitBelowTheSourcesRealSizeIsOutOfRangeAndNamesTheSizes() {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    try (LocalVolumeManager engine = f.open()) {
      Volume volume = engine.createVolume(request("ext4", AccessType.FILESYSTEM, MIB));
      Snapshot snapshot = engine.createSnapshot("snap", volume.id());
      VolumeRequest limited =
          new VolumeRequest(
              "limited",
              MIB,
              8 * MIB,
              "",
              AccessType.FILESYSTEM,
              "ext4",
              new ContentSource.FromSnapshot(snapshot.id()),
              Map.of());
      StorageException refused =
          catchThrowableOfType(StorageException.class, () -> engine.createVolume(limited));
      assertThat(refused.reason()).isEqualTo(Reason.OUT_OF_RANGE);
      assertThat(refused.getMessage())
          .isEqualTo(
              "the snapshot %s holds %d bytes; a volume made from it cannot be limited to %d bytes",
              snapshot.id(), 16 * MIB, 8 * MIB);

      VolumeRequest limitedClone =
          new VolumeRequest(
              "limited-clone",
              MIB,
              8 * MIB,
              "",
              AccessType.FILESYSTEM,
              "ext4",
              new ContentSource.FromVolume(volume.id()),
              Map.of());
      StorageException cloneRefused =
          catchThrowableOfType(StorageException.class, () -> engine.createVolume(limitedClone));
      assertThat(cloneRefused.reason()).isEqualTo(Reason.OUT_OF_RANGE);
      assertThat(cloneRefused.getMessage()).startsWith("the source volume " + volume.id());
      assertThat(f.pool.resolve("images").toFile().list()).as("nothing made").hasSize(1);
    }
  }

  @Test
  void anExpansionWithinTheFloorRaisesTheSnapshotSizeButNotTheCapacity() {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    try (LocalVolumeManager engine = f.open()) {
      Volume volume = engine.createVolume(request("ext4", AccessType.FILESYSTEM, MIB));
      Snapshot before = engine.createSnapshot("before", volume.id());

      assertThat(engine.expandVolume(volume.id(), 10 * MIB, 0).capacityBytes()).isEqualTo(16 * MIB);
      assertThat(engine.createSnapshot("within", volume.id()).sizeBytes()).isEqualTo(10 * MIB);
      assertThat(engine.expandVolume(volume.id(), 4 * MIB, 0).capacityBytes()).isEqualTo(16 * MIB);
      assertThat(engine.createSnapshot("smaller-ask", volume.id()).sizeBytes())
          .as("the largest request counts")
          .isEqualTo(10 * MIB);
      assertThat(engine.expandVolume(volume.id(), 20 * MIB, 0).capacityBytes()).isEqualTo(20 * MIB);
      assertThat(engine.createSnapshot("beyond", volume.id()).sizeBytes()).isEqualTo(20 * MIB);
      assertThat(engine.listSnapshots(new SnapshotFilter(before.id(), ""), "", 0).items())
          .as("a snapshot keeps the size of when it was taken")
          .containsExactly(before);
      assertThat(before.sizeBytes()).isEqualTo(MIB);
    }
  }

  /** With no required_bytes, the size asked for is the one the range resolved to. */
  @Test
  void aRequestWithOnlyALimitIsRecordedAtItsResolvedSize() {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    try (LocalVolumeManager engine = f.open()) {
      VolumeRequest limitOnly =
          new VolumeRequest(
              "source",
              0,
              20 * MIB + 5,
              "",
              AccessType.FILESYSTEM,
              "ext4",
              ContentSource.EMPTY,
              Map.of());
      Volume volume = engine.createVolume(limitOnly);
      assertThat(volume.capacityBytes()).isEqualTo(20 * MIB);
      assertThat(engine.createSnapshot("snap", volume.id()).sizeBytes()).isEqualTo(20 * MIB);
    }
  }

  /**
   * The previous release's records have neither requestedBytes nor restoreSizeBytes: a volume is
   * read as asked for its capacity, and a snapshot reports its image's size, as before.
   */
  @Test
  void recordsOfThePreviousReleaseReadAsRequestedEqualsCapacity() throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    String volumeId;
    String snapshotId;
    try (LocalVolumeManager engine = f.open()) {
      volumeId = engine.createVolume(request("ext4", AccessType.FILESYSTEM, MIB)).id();
      snapshotId = engine.createSnapshot("old-snap", volumeId).id();
    }
    Path volumeRecord = f.record(volumeId);
    Path snapshotRecord = f.pool.resolve(".soko/snapshots/" + snapshotId + ".json");
    assertThat(dropField(volumeRecord, "requestedBytes"))
        .containsExactlyInAnyOrder(
            "kind",
            "id",
            "name",
            "pool",
            "capacityBytes",
            "accessType",
            "fsType",
            "sourceKind",
            "sourceId",
            "createdAt",
            "state",
            "stagedAt");
    assertThat(dropField(snapshotRecord, "restoreSizeBytes"))
        .containsExactlyInAnyOrder(
            "kind",
            "id",
            "name",
            "pool",
            "sourceVolumeId",
            "sizeBytes",
            "accessType",
            "fsType",
            "createdAt",
            "state");

    try (LocalVolumeManager engine = f.open()) {
      assertThat(engine.recoveryReports().get(0).repairedAnything()).isFalse();
      assertThat(engine.listSnapshots(SnapshotFilter.ALL, "", 0).items())
          .extracting(Snapshot::sizeBytes)
          .containsExactly(16 * MIB);
      assertThat(engine.createSnapshot("old-snap", volumeId).sizeBytes()).isEqualTo(16 * MIB);
      assertThat(engine.createSnapshot("new-snap", volumeId).sizeBytes()).isEqualTo(16 * MIB);
      Volume restored =
          engine.createVolume(
              copyOf(
                  request("ext4", AccessType.FILESYSTEM, 16 * MIB),
                  "restored",
                  new ContentSource.FromSnapshot(snapshotId)));
      assertThat(restored.capacityBytes()).isEqualTo(16 * MIB);
    }
  }

  /** Rewrites a record file without {@code field}, as the previous release wrote it. */
  private static Set<String> dropField(Path record, String field) throws Exception {
    Map<String, String> fields = FlatJson.parse(Files.readString(record));
    assertThat(fields).containsKey(field);
    fields.remove(field);
    Files.writeString(record, FlatJson.write(fields));
    return FlatJson.parse(Files.readString(record)).keySet();
  }

  private static VolumeRequest request(String fsType, AccessType accessType, long bytes) {
    return new VolumeRequest(
        "source", bytes, 0, "", accessType, fsType, ContentSource.EMPTY, Map.of());
  }

  private static VolumeRequest copyOf(VolumeRequest source, String name, ContentSource from) {
    return new VolumeRequest(
        name,
        source.requiredBytes(),
        source.limitBytes(),
        source.pool(),
        source.accessType(),
        source.fsType(),
        from,
        source.parameters());
  }

  private static byte[] head(EngineFixture f, Volume volume) throws Exception {
    byte[] head = new byte[PAYLOAD.length];
    try (var in = Files.newInputStream(f.image(volume.id()))) {
      assertThat(in.readNBytes(head, 0, head.length)).isEqualTo(head.length);
    }
    return head;
  }
}
