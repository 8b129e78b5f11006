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
 * A clone of a volume this node's catalog does not hold: the engine asks {@link RemoteSnapshots}
 * for the volume and copies what its node streams, with a local clone's size rules and a restore's
 * crash ordering (a failed copy leaves no image, no record, and releases its space).
 */
class RemoteCloneTest {
  static final String SOURCE = "vol-remoteremoteremotere";
  static final String NODE = "node-2";
  static final byte[] PAYLOAD = "a volume written on node-2".getBytes(StandardCharsets.UTF_8);

  @TempDir Path dir;
  final FakeRemoteSnapshots remote = new FakeRemoteSnapshots();

  static VolumeRequest clone(String name, long bytes, long limit, String id) {
    return new VolumeRequest(
        name,
        bytes,
        limit,
        "",
        AccessType.FILESYSTEM,
        "ext4",
        new ContentSource.FromVolume(id),
        Map.of());
  }

  @Test
  void aVolumeOfAnotherNodeIsCopiedIntoANewVolumeWhoseRecordNamesItAsSource() throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    remote.hold(SOURCE, NODE, 16 * MIB, AccessType.FILESYSTEM, "ext4", PAYLOAD);
    Volume volume;
    try (LocalVolumeManager engine = f.open(remote)) {
      volume = engine.createVolume(clone("cloned", 0, 0, SOURCE));

      assertThat(volume.capacityBytes()).as("as large as its source").isEqualTo(16 * MIB);
      assertThat(FakeRemoteSnapshots.head(f.image(volume.id()), PAYLOAD.length)).isEqualTo(PAYLOAD);
      assertThat(remote.asked).containsExactly(SOURCE);
    }
    try (LocalVolumeManager reopened = f.open(remote)) {
      assertThat(reopened.findVolume(volume.id()))
          .hasValueSatisfying(
              v -> assertThat(v.source()).isEqualTo(new ContentSource.FromVolume(SOURCE)));
    }
  }

  @Test
  void aCloneIsNeverSmallerThanItsSourceAndALimitBelowItIsOutOfRange() throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    remote.hold(SOURCE, NODE, 16 * MIB, AccessType.FILESYSTEM, "ext4", PAYLOAD);
    try (LocalVolumeManager engine = f.open(remote)) {
      assertThat(engine.createVolume(clone("small", 8 * MIB, 0, SOURCE)).capacityBytes())
          .isEqualTo(16 * MIB);
      assertThat(engine.createVolume(clone("large", 32 * MIB, 0, SOURCE)).capacityBytes())
          .isEqualTo(32 * MIB);
      StorageException limited =
          catchThrowableOfType(
              StorageException.class,
              () -> engine.createVolume(clone("limited", 8 * MIB, 8 * MIB, SOURCE)));
      assertThat(limited.reason()).isEqualTo(Reason.OUT_OF_RANGE);
      assertThat(limited.getMessage()).contains("volume " + SOURCE + " on node node-2");
    }
  }

  @Test
  void aCopyCutMidwayLeavesNoImageNoRecordAndReleasesItsSpace() throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    remote.hold(SOURCE, NODE, 16 * MIB, AccessType.FILESYSTEM, "ext4", PAYLOAD);
    remote.cut(SOURCE, 5);
    try (LocalVolumeManager engine = f.open(remote)) {
      StorageException failed =
          catchThrowableOfType(
              StorageException.class, () -> engine.createVolume(clone("cloned", 0, 0, SOURCE)));

      assertThat(failed.reason()).isEqualTo(Reason.UNAVAILABLE);
      assertThat(remote.copiedTo.get(0)).as("the partial image is deleted").doesNotExist();
      try (Stream<Path> images = Files.list(f.pool.resolve("images"))) {
        assertThat(images).isEmpty();
      }
      assertThat(engine.capacity().get(0).availableBytes()).isEqualTo(1024 * MIB);
      assertThat(engine.listVolumes("", 0).items()).isEmpty();
    }
  }

  @Test
  void aVolumeNoNodeHoldsIsNotFoundAndALocalSourceIsClonedWithoutAskingAnyNode() throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    try (LocalVolumeManager engine = f.open(remote)) {
      StorageException missing =
          catchThrowableOfType(
              StorageException.class, () -> engine.createVolume(clone("c", 0, 0, SOURCE)));
      assertThat(missing.reason()).isEqualTo(Reason.NOT_FOUND);
      assertThat(missing.getMessage()).contains(SOURCE, "does not exist");

      Volume local = engine.createVolume(EngineFixture.fs("local", 4 * MIB));
      remote.asked.clear();
      engine.createVolume(clone("local-clone", 0, 0, local.id()));
      assertThat(remote.asked).isEmpty();
    }
  }

  @Test
  void aNodeThatIsGoneIsUnavailableInItsLocatorsWords() throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    remote.findFails =
        new StorageException(
            Reason.UNAVAILABLE,
            "volume "
                + SOURCE
                + " is on node node-2, which is gone (its Node object no longer"
                + " exists); its data cannot be copied");
    try (LocalVolumeManager engine = f.open(remote)) {
      StorageException gone =
          catchThrowableOfType(
              StorageException.class, () -> engine.createVolume(clone("c", 0, 0, SOURCE)));
      assertThat(gone.reason()).isEqualTo(Reason.UNAVAILABLE);
      assertThat(gone.getMessage()).contains("which is gone");
    }
  }
}
