package dev.soko.driver.volume;

import static dev.soko.driver.volume.EngineFixture.MIB;
import static dev.soko.driver.volume.EngineFixture.block;
import static dev.soko.driver.volume.EngineFixture.fs;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.soko.driver.model.AccessType;
import dev.soko.driver.model.ContentSource;
import dev.soko.driver.model.Volume;
import dev.soko.driver.model.VolumeCondition;
import dev.soko.driver.mount.FakeMounter;
import dev.soko.driver.mount.MountEntry;
import dev.soko.driver.mount.MountException;
import dev.soko.driver.state.FlatJson;
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
 * NodeExpandVolume's choice between growing a filesystem offline (unpublished ext4: staging mount
 * taken down, grown, made again) and online (published, or xfs), what it answers when the kernel
 * refuses, and how a growth cut short is put right, over fake mounts and loop devices.
 */
class NodeExpansionTest {
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

  private Volume staged(String fsType) {
    Volume volume =
        engine.createVolume(
            new VolumeRequest(
                "v-" + fsType,
                fsType.equals("xfs") ? 300 * MIB : 20 * MIB,
                0,
                "",
                AccessType.FILESYSTEM,
                fsType,
                ContentSource.EMPTY,
                Map.of()));
    engine.stage(stageRequest(volume));
    return volume;
  }

  private StageRequest stageRequest(Volume volume) {
    return new StageRequest(volume.id(), staging, AccessType.FILESYSTEM, "", FLAGS);
  }

  private void publish(Volume volume) {
    engine.publish(
        new PublishRequest(volume.id(), staging, target, false, AccessType.FILESYSTEM, List.of()));
  }

  /** The fake mounter's log from {@code from} on. */
  private List<String> logSince(int from) {
    List<String> log = f.mounter.log();
    return log.subList(from, log.size());
  }

  private VolumeCondition condition(Volume volume) {
    return engine.findVolume(volume.id()).orElseThrow().condition();
  }

  private void assertStagedWithItsFlags() {
    MountEntry mount = f.mounter.mountAt(staging).orElseThrow();
    assertThat(mount.source()).isEqualTo(DEVICE);
    assertThat(mount.options()).contains("noatime", "nodev");
    assertThat(mount.superOptions()).contains("discard");
  }

  @Test
  void anUnpublishedExt4VolumeGrowsWithItsStagingMountTakenDownAndMadeAgain() throws Exception {
    Volume volume = staged("ext4");
    int before = f.mounter.log().size();

    assertThat(engine.expandOnNode(volume.id(), target, 64 * MIB, 0)).isEqualTo(64 * MIB);

    assertThat(logSince(before))
        .containsExactly(
            "umount " + staging,
            "grow-offline ext4 " + DEVICE,
            "mount " + DEVICE + " " + staging + " noatime,nodev,discard");
    assertStagedWithItsFlags();
    assertThat(Files.size(f.image(volume.id()))).isEqualTo(64 * MIB);
    assertThat(condition(volume).abnormal()).isFalse();
    // The kubelet publishes next, and the pod sees the grown filesystem.
    publish(volume);
    assertThat(f.mounter.mountAt(target).orElseThrow().source()).isEqualTo(DEVICE);
  }

  @Test
  void aPublishedVolumeGrowsOnlineAndIsNeverUnmounted() {
    Volume volume = staged("ext4");
    publish(volume);
    int before = f.mounter.log().size();

    assertThat(engine.expandOnNode(volume.id(), target, 64 * MIB, 0)).isEqualTo(64 * MIB);

    assertThat(logSince(before)).containsExactly("grow ext4 " + DEVICE + " " + target);
  }

  @Test
  void aGrowthThePoolHasNoRoomForIsOutOfRangeAsOnTheControllersPath() {
    Volume volume = staged("ext4");
    publish(volume);

    StorageException refused =
        catchThrowableOfType(
            StorageException.class, () -> engine.expandOnNode(volume.id(), target, 8192 * MIB, 0));

    assertThat(refused.reason()).isEqualTo(Reason.OUT_OF_RANGE);
    assertThat(refused.getMessage()).contains("pool main has").contains("stays usable at");
    assertThat(engine.expandOnNode(volume.id(), target, 64 * MIB, 0)).isEqualTo(64 * MIB);
  }

  @Test
  void anyOtherMountOfTheStagedFilesystemCountsAsPublished() {
    Volume volume = staged("ext4");
    Path elsewhere = f.kubelet.resolve("pods/p2/volumes/pv1/mount");
    f.mounter.bind(staging, elsewhere); // a bind the driver did not make
    int before = f.mounter.log().size();

    engine.expandOnNode(volume.id(), target, 64 * MIB, 0);

    assertThat(logSince(before)).containsExactly("grow ext4 " + DEVICE + " " + staging);
  }

  @Test
  void aMountOfTheSameSuperblockUnderAnotherDeviceNameIsFoundToo() {
    MountEntry stagingMount =
        new MountEntry(
            30, 1, "7:4", "/", staging, List.of("rw"), "ext4", "/dev/loop4", List.of("rw"));
    MountEntry byOtherName =
        new MountEntry(
            31, 1, "7:4", "/", target, List.of("rw"), "ext4", "/dev/block/7:4", List.of("rw"));
    MountEntry otherVolume =
        new MountEntry(
            32, 1, "7:5", "/", Path.of("/x"), List.of("rw"), "ext4", "/dev/loop5", List.of("rw"));

    assertThat(
            OfflineGrowth.mountsOfFilesystem(
                List.of(stagingMount, byOtherName, otherVolume), "/dev/loop4"))
        .containsExactly(stagingMount, byOtherName);
  }

  @Test
  void aPublishedVolumeTheKernelWillNotGrowSaysWhyAndGrowsWhenNextStaged() {
    Volume volume = staged("ext4");
    publish(volume);
    f.mounter.failNextGrow(FakeMounter.refusedOnlineGrowth());

    StorageException refused =
        catchThrowableOfType(
            StorageException.class, () -> engine.expandOnNode(volume.id(), target, 64 * MIB, 0));

    assertThat(refused.reason()).isEqualTo(Reason.FAILED_PRECONDITION);
    assertThat(refused.getMessage())
        .contains("published at " + target + ", so it cannot be grown offline")
        .contains("lacks CAP_SYS_RESOURCE")
        .contains("next staged while unpublished");
    assertThat(f.mounter.log()).doesNotContain("umount " + staging);

    // The pod goes away and comes back: staging grows the filesystem before mounting it.
    engine.unpublish(volume.id(), target);
    engine.unstage(volume.id(), staging);
    String again = "/dev/loop1"; // the next loop device, holding the image's filesystem
    f.mounter.markFormatted(again, "ext4");
    int before = f.mounter.log().size();
    engine.stage(stageRequest(volume));
    assertThat(logSince(before))
        .containsExactly(
            "grow-offline ext4 " + again,
            "mount " + again + " " + staging + " noatime,nodev,discard");
    f.mounter.markFull(again); // what that growth did
    before = f.mounter.log().size();
    assertThat(engine.expandOnNode(volume.id(), target, 64 * MIB, 0)).isEqualTo(64 * MIB);
    assertThat(logSince(before)).as("nothing left to grow, nothing unmounted").isEmpty();
  }

  @Test
  void aFailedOfflineGrowthMountsTheVolumeAgainAndSaysWhatHappened() {
    Volume volume = staged("ext4");
    f.mounter.failNextOfflineGrow(MountException.failed("e2fsck: errors left uncorrected"));

    StorageException failed =
        catchThrowableOfType(
            StorageException.class, () -> engine.expandOnNode(volume.id(), target, 64 * MIB, 0));

    assertThat(failed.reason()).isEqualTo(Reason.INTERNAL);
    assertThat(failed.getMessage())
        .contains("cannot grow volume " + volume.id() + " offline")
        .contains("errors left uncorrected")
        .contains("mounted again at " + staging);
    assertStagedWithItsFlags();
    assertThat(condition(volume).abnormal()).isFalse();
  }

  @Test
  void aFailedRemountIsReportedAndTheNextExpansionMountsItAgain() {
    Volume volume = staged("ext4");
    f.mounter.failNextMount(MountException.failed("mount: EIO"));

    StorageException failed =
        catchThrowableOfType(
            StorageException.class, () -> engine.expandOnNode(volume.id(), target, 64 * MIB, 0));

    assertThat(failed.getMessage())
        .contains("unmounted from its staging path " + staging)
        .contains("mounting it there again failed: mount: EIO")
        .contains("next NodeStageVolume or NodeExpandVolume mounts it again");
    assertThat(f.mounter.mountAt(staging)).isEmpty();
    assertThat(condition(volume).message()).contains("staging mount is gone");

    // The kubelet retries the expansion (it had marked the volume staged).
    int before = f.mounter.log().size();
    assertThat(engine.expandOnNode(volume.id(), target, 64 * MIB, 0)).isEqualTo(64 * MIB);
    assertThat(logSince(before))
        .containsExactly(
            "grow-offline ext4 " + DEVICE,
            "mount " + DEVICE + " " + staging + " noatime,nodev,discard");
    assertStagedWithItsFlags();
    assertThat(condition(volume).abnormal()).isFalse();
  }

  @Test
  void aCrashBetweenUnmountAndMountIsReportedByRecoveryAndRepairedByTheNextStage() {
    Volume volume = staged("ext4");
    f.mounter.unmount(staging); // the offline growth's unmount, and then the driver died
    engine.close();

    engine = f.open();
    Recovery.Report report = engine.recoveryReports().get(0);
    assertThat(report.stagedVolumesLostTheirMount()).isEqualTo(1);
    assertThat(report.staleLoopDevicesDetached()).as("its loop device is kept").isZero();
    assertThat(f.loops.attached()).containsKey(DEVICE);
    assertThat(condition(volume).message()).contains("staging mount is gone");

    int before = f.mounter.log().size();
    engine.stage(stageRequest(volume));
    assertThat(logSince(before))
        .containsExactly(
            "grow-offline ext4 " + DEVICE,
            "mount " + DEVICE + " " + staging + " noatime,nodev,discard");
    assertThat(condition(volume).abnormal()).isFalse();
  }

  @Test
  void aCrashBetweenUnmountAndMountIsRepairedByTheNextExpansionAfterARestart() {
    Volume volume = staged("ext4");
    f.mounter.unmount(staging);
    engine.close();
    engine = f.open();

    engine.expandOnNode(volume.id(), target, 64 * MIB, 0);

    assertStagedWithItsFlags();
    assertThat(condition(volume).abnormal()).isFalse();
  }

  @Test
  void aVolumeStagedByADriverThatDidNotRecordItsFlagsIsMountedAgainWithTheFlagsItHas()
      throws Exception {
    Volume volume = staged("ext4");
    engine.close();
    Map<String, String> fields =
        new java.util.LinkedHashMap<>(FlatJson.parse(Files.readString(f.record(volume.id()))));
    assertThat(fields.remove("stageFlags")).isEqualTo("noatime,nodev,discard");
    Files.writeString(f.record(volume.id()), FlatJson.write(fields));
    engine = f.open();
    int before = f.mounter.log().size();

    engine.expandOnNode(volume.id(), target, 64 * MIB, 0);

    assertThat(logSince(before))
        .containsExactly(
            "umount " + staging,
            "grow-offline ext4 " + DEVICE,
            "mount " + DEVICE + " " + staging + " noatime,nodev,discard");
    assertStagedWithItsFlags();
  }

  @Test
  void withoutRecordedFlagsAVolumeWhoseStagingMountIsGoneIsNotGuessedAt() throws Exception {
    Volume volume = staged("ext4");
    f.mounter.unmount(staging);
    engine.close();
    Map<String, String> fields =
        new java.util.LinkedHashMap<>(FlatJson.parse(Files.readString(f.record(volume.id()))));
    fields.remove("stageFlags");
    Files.writeString(f.record(volume.id()), FlatJson.write(fields));
    engine = f.open();

    StorageException refused =
        catchThrowableOfType(
            StorageException.class, () -> engine.expandOnNode(volume.id(), target, 64 * MIB, 0));

    assertThat(refused.reason()).isEqualTo(Reason.FAILED_PRECONDITION);
    assertThat(refused.getMessage()).contains("not mounted there; stage it again");
    assertThat(f.mounter.mountAt(staging)).isEmpty();
  }

  @Test
  void aFilesystemThatAlreadyFillsItsDeviceIsLeftMounted() {
    Volume volume = staged("ext4");
    f.mounter.markFull(DEVICE);
    int before = f.mounter.log().size();

    engine.expandOnNode(volume.id(), target, 64 * MIB, 0);

    assertThat(logSince(before)).isEmpty();
  }

  @Test
  void xfsGrowsOnlineEvenWhenUnpublished() {
    Volume volume = staged("xfs");
    int before = f.mounter.log().size();

    engine.expandOnNode(volume.id(), target, 400 * MIB, 0);

    assertThat(logSince(before)).containsExactly("grow xfs " + DEVICE + " " + staging);
  }

  @Test
  void aBlockVolumeOnlyHasItsDeviceRefreshed() {
    Volume volume = engine.createVolume(block("raw", 20 * MIB));
    engine.stage(new StageRequest(volume.id(), staging, AccessType.BLOCK, "", List.of()));
    int before = f.mounter.log().size();

    assertThat(engine.expandOnNode(volume.id(), target, 64 * MIB, 0)).isEqualTo(64 * MIB);

    assertThat(logSince(before)).isEmpty();
    assertThat(f.loops.refreshed()).contains(DEVICE);
  }

  @Test
  void anUnstagedVolumeIsStillRefused() {
    Volume volume = engine.createVolume(fs("cold", 20 * MIB));
    assertThat(
            catchThrowableOfType(
                    StorageException.class,
                    () -> engine.expandOnNode(volume.id(), target, 64 * MIB, 0))
                .reason())
        .isEqualTo(Reason.FAILED_PRECONDITION);
  }
}
