package dev.soko.driver.volume;

import static dev.soko.driver.volume.EngineFixture.MIB;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.soko.driver.model.AccessType;
import dev.soko.driver.model.ContentSource;
import dev.soko.driver.model.Volume;
import dev.soko.driver.volume.StorageException.Reason;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A restore of a snapshot this node's catalog does not hold: the engine asks {@link
 * RemoteSnapshots} and copies what another node describes into a new image, with a local create's
 * checks, sizing, reservation and crash ordering (the image first, the record after; a failed copy
 * leaves neither and releases its space).
 */
class RemoteRestoreTest {
  static final String REMOTE = "snap-remoteremoteremotere";
  static final String NODE = "node-2";
  static final byte[] PAYLOAD = "written on node-2".getBytes(StandardCharsets.UTF_8);

  @TempDir Path dir;
  final FakeRemoteSnapshots remote = new FakeRemoteSnapshots();

  static VolumeRequest restore(String name, long bytes, AccessType access, String fs, String id) {
    return new VolumeRequest(
        name, bytes, 0, "", access, fs, new ContentSource.FromSnapshot(id), Map.of());
  }

  @Test
  void aSnapshotOfAnotherNodeIsCopiedIntoANewVolumeWhoseRecordNamesItAsSource() throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    remote.hold(REMOTE, NODE, 16 * MIB, AccessType.FILESYSTEM, "ext4", PAYLOAD);
    Volume volume;
    try (LocalVolumeManager engine = f.open(remote)) {
      volume = engine.createVolume(restore("restored", 0, AccessType.FILESYSTEM, "ext4", REMOTE));

      assertThat(volume.capacityBytes()).as("as large as the snapshot").isEqualTo(16 * MIB);
      assertThat(FakeRemoteSnapshots.head(f.image(volume.id()), PAYLOAD.length))
          .as("the image is the copy")
          .isEqualTo(PAYLOAD);
      assertThat(Files.size(f.image(volume.id()))).isEqualTo(16 * MIB);
      assertThat(remote.copiedTo).containsExactly(f.image(volume.id()));
      assertThat(engine.capacity().get(0).availableBytes()).isEqualTo(1008 * MIB);
    }
    try (LocalVolumeManager reopened = f.open(remote)) {
      assertThat(reopened.findVolume(volume.id()))
          .as("recorded, with the snapshot as its source")
          .hasValueSatisfying(
              v -> assertThat(v.source()).isEqualTo(new ContentSource.FromSnapshot(REMOTE)));
      assertThat(f.image(volume.id())).exists();
    }
  }

  @Test
  void aLargerClaimGrowsTheCopyAndASmallerOneIsMadeAsLargeAsTheSnapshot() throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    remote.hold(REMOTE, NODE, 16 * MIB, AccessType.BLOCK, "", PAYLOAD);
    try (LocalVolumeManager engine = f.open(remote)) {
      Volume larger =
          engine.createVolume(restore("larger", 64 * MIB, AccessType.BLOCK, "", REMOTE));
      assertThat(larger.capacityBytes()).isEqualTo(64 * MIB);
      assertThat(Files.size(f.image(larger.id()))).isEqualTo(64 * MIB);
      assertThat(FakeRemoteSnapshots.head(f.image(larger.id()), PAYLOAD.length)).isEqualTo(PAYLOAD);

      Volume smaller =
          engine.createVolume(restore("smaller", 4 * MIB, AccessType.BLOCK, "", REMOTE));
      assertThat(smaller.capacityBytes()).as("never below the snapshot").isEqualTo(16 * MIB);

      VolumeRequest limited =
          new VolumeRequest(
              "limited",
              4 * MIB,
              8 * MIB,
              "",
              AccessType.BLOCK,
              "",
              new ContentSource.FromSnapshot(REMOTE),
              Map.of());
      StorageException refused =
          catchThrowableOfType(StorageException.class, () -> engine.createVolume(limited));
      assertThat(refused.reason()).isEqualTo(Reason.OUT_OF_RANGE);
      assertThat(refused.getMessage()).contains(REMOTE).contains("on node " + NODE);
    }
  }

  @Test
  void aTargetPoolWithoutRoomIsResourceExhaustedNamingItsFreeSpaceBeforeAnythingIsCopied()
      throws Exception {
    EngineFixture f = new EngineFixture(dir, 64 * MIB);
    remote.hold(REMOTE, NODE, 128 * MIB, AccessType.BLOCK, "", PAYLOAD);
    try (LocalVolumeManager engine = f.open(remote)) {
      StorageException full =
          catchThrowableOfType(
              StorageException.class,
              () -> engine.createVolume(restore("too-large", 0, AccessType.BLOCK, "", REMOTE)));

      assertThat(full.reason())
          .as("the provisioner's cue to try a node with room")
          .isEqualTo(Reason.RESOURCE_EXHAUSTED);
      assertThat(full.getMessage())
          .contains("pool main has " + 64 * MIB + " bytes available", 128 * MIB + " more");
      assertThat(remote.copiedTo).as("nothing streamed").isEmpty();
      assertThat(engine.listVolumes("", 0).items()).isEmpty();
      assertThat(engine.capacity().get(0).availableBytes()).isEqualTo(64 * MIB);
    }
  }

  @Test
  void aRetryOfTheSameNameReturnsTheSameVolumeWithoutCopyingAgain() throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    remote.hold(REMOTE, NODE, 16 * MIB, AccessType.FILESYSTEM, "xfs", PAYLOAD);
    try (LocalVolumeManager engine = f.open(remote)) {
      VolumeRequest request = restore("restored", 16 * MIB, AccessType.FILESYSTEM, "xfs", REMOTE);
      Volume first = engine.createVolume(request);
      Volume again = engine.createVolume(request);
      assertThat(again).isEqualTo(first);
      assertThat(remote.copiedTo).hasSize(1);

      VolumeRequest other =
          restore("restored", 16 * MIB, AccessType.FILESYSTEM, "xfs", "snap-" + "o".repeat(20));
      assertThat(EngineFixture.reason(() -> engine.createVolume(other)))
          .as("the same name from another source")
          .isEqualTo(Reason.ALREADY_EXISTS);
    }
  }

  /** Shown failing once with the image's delete removed from the failed create's undo. */
  @Test
  void aCopyCutMidwayLeavesNoImageNoRecordAndReleasesItsSpace() throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    remote.hold(REMOTE, NODE, 16 * MIB, AccessType.FILESYSTEM, "ext4", PAYLOAD);
    remote.cut(REMOTE, 5);
    try (LocalVolumeManager engine = f.open(remote)) {
      StorageException failed =
          catchThrowableOfType(
              StorageException.class,
              () ->
                  engine.createVolume(
                      restore("restored", 0, AccessType.FILESYSTEM, "ext4", REMOTE)));

      assertThat(failed.reason()).isEqualTo(Reason.UNAVAILABLE);
      assertThat(failed.getMessage()).contains("node-2").contains("cut");
      assertThat(remote.copiedTo).hasSize(1);
      assertThat(remote.copiedTo.get(0)).as("the partial image is deleted").doesNotExist();
      try (Stream<Path> images = Files.list(f.pool.resolve("images"))) {
        assertThat(images).as("no image").isEmpty();
      }
      assertThat(engine.capacity().get(0).availableBytes())
          .as("its reservation released")
          .isEqualTo(1024 * MIB);
      assertThat(engine.listVolumes("", 0).items()).as("no volume").isEmpty();
    }
    try (LocalVolumeManager reopened = f.open(remote)) {
      assertThat(reopened.listVolumes("", 0).items()).as("no record on disk").isEmpty();

      // The next try, with the stream whole again, succeeds under the same name.
      remote.hold(REMOTE, NODE, 16 * MIB, AccessType.FILESYSTEM, "ext4", PAYLOAD);
      Volume volume =
          reopened.createVolume(restore("restored", 0, AccessType.FILESYSTEM, "ext4", REMOTE));
      assertThat(FakeRemoteSnapshots.head(f.image(volume.id()), PAYLOAD.length)).isEqualTo(PAYLOAD);
    }
  }

  @Test
  void anotherFilesystemOrAccessTypeIsRefusedBeforeAnythingIsCopied() throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    remote.hold(REMOTE, NODE, 16 * MIB, AccessType.FILESYSTEM, "xfs", PAYLOAD);
    try (LocalVolumeManager engine = f.open(remote)) {
      StorageException ext4 =
          catchThrowableOfType(
              StorageException.class,
              () -> engine.createVolume(restore("ext4", 0, AccessType.FILESYSTEM, "ext4", REMOTE)));
      assertThat(ext4.reason()).isEqualTo(Reason.INVALID_ARGUMENT);
      assertThat(ext4.getMessage())
          .isEqualTo(
              "the snapshot " + REMOTE + " holds a xfs volume; it cannot become a ext4 volume");
      assertThat(
              EngineFixture.reason(
                  () -> engine.createVolume(restore("block", 0, AccessType.BLOCK, "", REMOTE))))
          .isEqualTo(Reason.INVALID_ARGUMENT);
      assertThat(remote.copiedTo).isEmpty();
      assertThat(engine.capacity().get(0).availableBytes()).isEqualTo(1024 * MIB);
    }
  }

  @Test
  void aSnapshotNoNodeIsKnownToHoldIsNotFoundAndAMalformedIdIsNotAsked() throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    try (LocalVolumeManager engine = f.open(remote)) {
      StorageException missing =
          catchThrowableOfType(
              StorageException.class,
              () ->
                  engine.createVolume(
                      restore("restored", 0, AccessType.FILESYSTEM, "ext4", REMOTE)));
      assertThat(missing.reason()).isEqualTo(Reason.NOT_FOUND);
      assertThat(missing.getMessage()).isEqualTo("snapshot \"" + REMOTE + "\" does not exist");
      assertThat(remote.asked).containsExactly(REMOTE);

      assertThat(
              EngineFixture.reason(
                  () ->
                      engine.createVolume(
                          restore("bad", 0, AccessType.FILESYSTEM, "ext4", "not-a-snapshot"))))
          .isEqualTo(Reason.NOT_FOUND);
      assertThat(remote.asked).as("no Soko ID: no node is asked").containsExactly(REMOTE);
    }
  }

  @Test
  void aLocatorsFailurePassesThroughWithItsWords() throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    String gone =
        "snapshot "
            + REMOTE
            + " is on node node-2, which is gone (its Node object no longer exists); its data"
            + " cannot be copied";
    remote.findFails = new StorageException(Reason.UNAVAILABLE, gone);
    try (LocalVolumeManager engine = f.open(remote)) {
      StorageException failed =
          catchThrowableOfType(
              StorageException.class,
              () ->
                  engine.createVolume(
                      restore("restored", 0, AccessType.FILESYSTEM, "ext4", REMOTE)));
      assertThat(failed.reason()).isEqualTo(Reason.UNAVAILABLE);
      assertThat(failed.getMessage()).isEqualTo(gone);
      assertThat(engine.capacity().get(0).availableBytes()).isEqualTo(1024 * MIB);
    }
  }

  @Test
  void aSnapshotThisNodeHoldsIsRestoredLocallyWithoutAskingAnyOtherNode() throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    try (LocalVolumeManager engine = f.open(remote)) {
      Volume source = engine.createVolume(EngineFixture.fs("source", 16 * MIB));
      String snapshot = engine.createSnapshot("snap", source.id()).id();
      engine.createVolume(restore("restored", 0, AccessType.FILESYSTEM, "ext4", snapshot));
      assertThat(remote.asked).isEmpty();
    }
  }
}
