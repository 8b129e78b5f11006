package dev.soko.driver.volume;

import static dev.soko.driver.volume.EngineFixture.MIB;
import static dev.soko.driver.volume.EngineFixture.block;
import static dev.soko.driver.volume.EngineFixture.fs;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.soko.driver.model.AccessType;
import dev.soko.driver.model.ContentSource;
import dev.soko.driver.model.Volume;
import dev.soko.driver.mount.FakeMounter;
import dev.soko.driver.volume.StorageException.Reason;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A growth the controller hands to the node ({@link VolumeManager#expandNow}): what it grows at
 * once for each state of the volume, when it leaves the filesystem to NodeExpandVolume, and what it
 * refuses before changing anything, over fake mounts and loop devices.
 */
class ImmediateGrowthTest {
  private static final List<String> FLAGS = List.of("noatime", "nodev", "discard");
  private static final String DEVICE = "/dev/loop0";

  @TempDir Path dir;
  EngineFixture f;
  LocalVolumeManager engine;
  Path staging;
  Path target;

  @BeforeEach
  void setUp() {
    f = new EngineFixture(dir, 4096 * MIB);
    engine = f.open();
    staging = f.kubelet.resolve("plugins/staging/pv1");
    target = f.kubelet.resolve("pods/p1/volumes/pv1/mount");
  }

  @AfterEach
  void tearDown() {
    engine.close();
  }

  private Volume created(String fsType) {
    return engine.createVolume(
        new VolumeRequest(
            "v-" + fsType,
            fsType.equals("xfs") ? 300 * MIB : 20 * MIB,
            0,
            "",
            AccessType.FILESYSTEM,
            fsType,
            ContentSource.EMPTY,
            Map.of()));
  }

  private Volume published(String fsType) {
    Volume volume = created(fsType);
    engine.stage(new StageRequest(volume.id(), staging, AccessType.FILESYSTEM, "", FLAGS));
    engine.publish(
        new PublishRequest(volume.id(), staging, target, false, AccessType.FILESYSTEM, List.of()));
    return volume;
  }

  private List<String> logSince(int from) {
    List<String> log = f.mounter.log();
    return log.subList(from, log.size());
  }

  private long capacity(Volume volume) {
    return engine.findVolume(volume.id()).orElseThrow().capacityBytes();
  }

  @Test
  void aPublishedXfsVolumeGrowsOnlineAndLeavesTheKubeletNothing() throws Exception {
    Volume volume = published("xfs");
    int before = f.mounter.log().size();

    assertThat(engine.expandNow(volume.id(), 400 * MIB, 0))
        .isEqualTo(new ExpandResult(400 * MIB, false));

    assertThat(logSince(before)).containsExactly("grow xfs " + DEVICE + " " + staging);
    assertThat(f.loops.refreshed()).contains(DEVICE);
    assertThat(Files.size(f.image(volume.id()))).isEqualTo(400 * MIB);
  }

  @Test
  void aStagedUnpublishedExt4VolumeGrowsOffline() {
    Volume volume = created("ext4");
    engine.stage(new StageRequest(volume.id(), staging, AccessType.FILESYSTEM, "", FLAGS));
    int before = f.mounter.log().size();

    assertThat(engine.expandNow(volume.id(), 64 * MIB, 0).nodeExpansionRequired()).isFalse();

    assertThat(logSince(before))
        .containsExactly(
            "umount " + staging,
            "grow-offline ext4 " + DEVICE,
            "mount " + DEVICE + " " + staging + " noatime,nodev,discard");
  }

  @Test
  void aMountedExt4TheKernelWillNotGrowIsLeftToTheKubeletWithItsStorageGrown() throws Exception {
    Volume volume = published("ext4");
    f.mounter.failNextGrow(FakeMounter.refusedOnlineGrowth());

    assertThat(engine.expandNow(volume.id(), 64 * MIB, 0))
        .isEqualTo(new ExpandResult(64 * MIB, true));

    assertThat(Files.size(f.image(volume.id()))).isEqualTo(64 * MIB);
    assertThat(capacity(volume)).isEqualTo(64 * MIB);
    assertThat(f.mounter.log()).doesNotContain("umount " + staging);
    // The kubelet's NodeExpandVolume then finds the storage grown and grows the filesystem.
    int before = f.mounter.log().size();
    assertThat(engine.expandOnNode(volume.id(), target, 64 * MIB, 0)).isEqualTo(64 * MIB);
    assertThat(logSince(before)).containsExactly("grow ext4 " + DEVICE + " " + target);
  }

  @Test
  void anUnstagedVolumeGrowsItsImageAndTheNextStageGrowsItsFilesystemUnmounted() throws Exception {
    Volume volume = created("ext4");
    engine.stage(new StageRequest(volume.id(), staging, AccessType.FILESYSTEM, "", FLAGS));
    engine.unstage(volume.id(), staging); // formatted once, no pod now
    int before = f.mounter.log().size();

    assertThat(engine.expandNow(volume.id(), 64 * MIB, 0))
        .isEqualTo(new ExpandResult(64 * MIB, false));

    assertThat(logSince(before)).isEmpty();
    assertThat(Files.size(f.image(volume.id()))).isEqualTo(64 * MIB);
    String again = "/dev/loop1";
    f.mounter.markFormatted(again, "ext4");
    before = f.mounter.log().size();
    engine.stage(new StageRequest(volume.id(), staging, AccessType.FILESYSTEM, "", FLAGS));
    assertThat(logSince(before))
        .containsExactly(
            "grow-offline ext4 " + again,
            "mount " + again + " " + staging + " noatime,nodev,discard");
  }

  @Test
  void aBlockVolumeInUseHasItsDeviceGrownAtOnce() {
    Volume volume = engine.createVolume(block("raw", 20 * MIB));
    engine.stage(new StageRequest(volume.id(), staging, AccessType.BLOCK, "", List.of()));
    int before = f.mounter.log().size();

    assertThat(engine.expandNow(volume.id(), 64 * MIB, 0))
        .isEqualTo(new ExpandResult(64 * MIB, false));

    assertThat(logSince(before)).isEmpty();
    assertThat(f.loops.refreshed()).contains(DEVICE);
  }

  @Test
  void aRepeatedGrowthAnswersTheSameAndALowerRequestIsNotRefused() {
    Volume volume = created("xfs");

    ExpandResult first = engine.expandNow(volume.id(), 400 * MIB, 0);
    assertThat(engine.expandNow(volume.id(), 400 * MIB, 0)).isEqualTo(first);
    // A user who lowers the request back (external-resizer sends required_bytes alone) gets the
    // volume as it is, never a refusal.
    assertThat(engine.expandNow(volume.id(), 350 * MIB, 0))
        .isEqualTo(new ExpandResult(400 * MIB, false));
  }

  @Test
  void growthBeyondThePoolIsOutOfRangeNamingThePoolAndLeavesTheVolumeAsItWas() throws Exception {
    Volume volume = published("ext4");

    StorageException refused =
        catchThrowableOfType(
            StorageException.class, () -> engine.expandNow(volume.id(), 8192 * MIB, 0));

    assertThat(refused.reason()).isEqualTo(Reason.OUT_OF_RANGE);
    assertThat(refused.getMessage())
        .contains("pool main has")
        .contains("bytes available")
        .contains("stays usable at " + 20 * MIB + " bytes");
    assertThat(capacity(volume)).isEqualTo(20 * MIB);
    assertThat(Files.size(f.image(volume.id()))).isEqualTo(20 * MIB);
    // The room is still there for a smaller growth.
    assertThat(engine.expandNow(volume.id(), 64 * MIB, 0).capacityBytes()).isEqualTo(64 * MIB);
  }

  @Test
  void aShrinkIsOutOfRange() {
    Volume volume = created("ext4");
    assertThat(
            catchThrowableOfType(
                    StorageException.class, () -> engine.expandNow(volume.id(), 0, 10 * MIB))
                .reason())
        .isEqualTo(Reason.OUT_OF_RANGE);
  }

  @Test
  void anUnknownVolumeIsNotFound() {
    assertThat(
            catchThrowableOfType(
                    StorageException.class, () -> engine.expandNow("nope", 64 * MIB, 0))
                .reason())
        .isEqualTo(Reason.NOT_FOUND);
  }

  @Test
  void aFilesystemVolumeNeverStagedGrowsItsImage() throws Exception {
    Volume volume = engine.createVolume(fs("cold", 20 * MIB));
    assertThat(engine.expandNow(volume.id(), 64 * MIB, 0).nodeExpansionRequired()).isFalse();
    assertThat(Files.size(f.image(volume.id()))).isEqualTo(64 * MIB);
  }
}
