package dev.soko.driver.volume;

import static dev.soko.driver.volume.EngineFixture.MIB;
import static dev.soko.driver.volume.EngineFixture.block;
import static dev.soko.driver.volume.EngineFixture.fs;
import static dev.soko.driver.volume.EngineFixture.reason;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.soko.driver.model.AccessType;
import dev.soko.driver.model.ContentSource;
import dev.soko.driver.model.Snapshot;
import dev.soko.driver.model.Volume;
import dev.soko.driver.model.VolumeCondition;
import dev.soko.driver.mount.VolumeGeometry;
import dev.soko.driver.state.Ids;
import dev.soko.driver.volume.StorageException.Reason;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Stage, publish, their reverses, stats and node expansion over fake mounts and loop devices. */
class NodeSideTest {
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

  private StageRequest stage(String id) {
    return new StageRequest(id, staging, AccessType.FILESYSTEM, "", List.of("noatime"));
  }

  private PublishRequest publish(String id, boolean readOnly) {
    return new PublishRequest(id, staging, target, readOnly, AccessType.FILESYSTEM, List.of());
  }

  @Test
  void fullFilesystemCycleIsIdempotentAtEveryStep() {
    Volume volume = engine.createVolume(fs("a", 20 * MIB));
    engine.stage(stage(volume.id()));
    engine.stage(stage(volume.id()));
    assertThat(f.loops.attached()).hasSize(1);
    assertThat(f.mounter.log().stream().filter(l -> l.startsWith("mkfs"))).hasSize(1);
    assertThat(engine.findVolume(volume.id()).orElseThrow().condition().abnormal()).isFalse();

    engine.publish(publish(volume.id(), true));
    engine.publish(publish(volume.id(), true));
    assertThat(f.mounter.mountAt(target).orElseThrow().readOnly()).isTrue();
    assertThat(reason(() -> engine.publish(publish(volume.id(), false))))
        .isEqualTo(Reason.ALREADY_EXISTS);

    VolumeUsage usage = engine.usage(volume.id(), target);
    assertThat(usage.totalBytes()).isEqualTo(100 * MIB);
    assertThat(usage.usedInodes()).isEqualTo(100);
    assertThat(usage.condition().abnormal()).isFalse();

    engine.unpublish(volume.id(), target);
    engine.unpublish(volume.id(), target);
    assertThat(target).doesNotExist();
    engine.unstage(volume.id(), staging);
    engine.unstage(volume.id(), staging);
    assertThat(f.loops.attached()).isEmpty();
    assertThat(f.mounter.mounts()).isEmpty();
    engine.deleteVolume(volume.id());
  }

  @Test
  void anUnstageWhoseDeviceStaysBoundFailsRetryablyAndTheRetrySucceedsOnceItIsFree() {
    Volume volume = engine.createVolume(fs("a", 20 * MIB));
    engine.stage(stage(volume.id()));
    String device = f.loops.attached().keySet().iterator().next();
    f.loops.holdElsewhere(device);

    StorageException busy =
        catchThrowableOfType(StorageException.class, () -> engine.unstage(volume.id(), staging));
    assertThat(busy.reason()).isEqualTo(Reason.UNAVAILABLE);
    assertThat(busy.getMessage()).contains(device, volume.id());
    assertThat(f.mounter.mounts()).as("the filesystem is unmounted all the same").isEmpty();
    assertThat(reason(() -> engine.deleteVolume(volume.id())))
        .as("its image is still bound")
        .isEqualTo(Reason.FAILED_PRECONDITION);

    f.loops.letGo(device);
    engine.unstage(volume.id(), staging); // the kubelet's retry
    assertThat(f.loops.attached()).isEmpty();
    engine.deleteVolume(volume.id());
  }

  @Test
  void loopDevicesGetDirectIoWithABlockSizeTheVolumesContentAllows() throws Exception {
    int poolBlock = VolumeGeometry.poolBlockSize(f.pool);
    Volume fresh = engine.createVolume(fs("fresh", 20 * MIB));
    engine.stage(stage(fresh.id()));
    assertThat(f.loops.blockSize(f.loops.attached().keySet().iterator().next()))
        .as("a blank image is made with 4 KiB units and gets the pool's block size")
        .isEqualTo(Math.min(poolBlock, 4096));
    engine.unstage(fresh.id(), staging);

    // A volume made before direct I/O: ext4 with 1 KiB blocks (mke2fs's default under 512 MiB).
    Volume old = engine.createVolume(fs("old", 20 * MIB));
    ByteBuffer superblock = ByteBuffer.allocate(4096).order(ByteOrder.LITTLE_ENDIAN);
    superblock.putInt(1024 + 0x18, 0).putShort(1024 + 0x38, (short) 0xEF53);
    try (FileChannel image = FileChannel.open(f.image(old.id()), StandardOpenOption.WRITE)) {
      image.write(ByteBuffer.wrap(superblock.array()));
    }
    engine.stage(stage(old.id()));
    assertThat(f.loops.blockSize(f.loops.attached().keySet().iterator().next()))
        .as("read from its superblock: larger blocks would not mount it")
        .isEqualTo(1024);
    engine.unstage(old.id(), staging);

    Volume raw = engine.createVolume(block("raw", 20 * MIB));
    engine.stage(new StageRequest(raw.id(), staging, AccessType.BLOCK, "", List.of()));
    assertThat(f.loops.blockSize(f.loops.attached().keySet().iterator().next()))
        .as("a block volume keeps its 512-byte sectors")
        .isEqualTo(512);
  }

  @Test
  void aPathThatCannotBeADirectoryIsBadInput() throws Exception {
    Volume volume = engine.createVolume(fs("f", 20 * MIB));
    Files.createDirectories(staging.getParent());
    Files.writeString(staging, "a file where the CO should have made a directory");
    assertThat(reason(() -> engine.stage(stage(volume.id())))).isEqualTo(Reason.INVALID_ARGUMENT);

    StageRequest below =
        new StageRequest(
            volume.id(), staging.resolve("below"), AccessType.FILESYSTEM, "", List.of());
    assertThat(reason(() -> engine.stage(below))).isEqualTo(Reason.INVALID_ARGUMENT);
    assertThat(f.loops.attached()).as("nothing stays attached").isEmpty();
  }

  @Test
  void aBlockTargetIsAFileAndAFailedPublishRemovesIt() throws Exception {
    Volume volume = engine.createVolume(block("b", 20 * MIB));
    engine.stage(new StageRequest(volume.id(), staging, AccessType.BLOCK, "", List.of()));
    Path device = f.kubelet.resolve("plugins/volumeDevices/publish/pv1/pod1");
    PublishRequest request =
        new PublishRequest(volume.id(), staging, device, false, AccessType.BLOCK, List.of());

    f.mounter.failNextBind(StorageException.internal("mount(2) failed", new RuntimeException()));
    assertThat(reason(() -> engine.publish(request))).isEqualTo(Reason.INTERNAL);
    assertThat(device).as("the target it created is removed again").doesNotExist();

    Files.createDirectories(device);
    assertThat(reason(() -> engine.publish(request))).isEqualTo(Reason.INVALID_ARGUMENT);
    Files.delete(device);
    engine.publish(request);
    assertThat(device).isRegularFile();
    assertThat(f.mounter.mountAt(device)).isPresent();
  }

  @Test
  void unpublishLeavesAMountThatIsNotTheVolumesAlone() {
    Volume staged = engine.createVolume(fs("staged", 20 * MIB));
    engine.stage(stage(staged.id()));
    Volume other = engine.createVolume(fs("other", 20 * MIB));

    // The CO names another volume's staging mount as this volume's target path.
    assertThat(reason(() -> engine.unpublish(other.id(), staging)))
        .isEqualTo(Reason.FAILED_PRECONDITION);
    assertThat(f.mounter.mountAt(staging)).as("the other volume stays staged").isPresent();
  }

  @Test
  void stagingAVolumeThatIsStillMountedElsewhereIsRefused() {
    Volume volume = engine.createVolume(fs("busy", 20 * MIB));
    engine.stage(stage(volume.id()));
    engine.publish(publish(volume.id(), false));
    engine.unpublish(volume.id(), staging); // the CO named the staging path as the target
    Path second = f.kubelet.resolve("plugins/staging/second");
    StageRequest again =
        new StageRequest(volume.id(), second, AccessType.FILESYSTEM, "", List.of());

    assertThat(reason(() -> engine.stage(again))).isEqualTo(Reason.FAILED_PRECONDITION);
    assertThat(f.mounter.mountAt(second)).isEmpty();
    assertThat(f.mounter.mountAt(target)).as("the publication is untouched").isPresent();
  }

  @Test
  void aSnapshotFreezesOnlyTheVolumesOwnFilesystem() {
    Volume stale = engine.createVolume(fs("stale", 20 * MIB));
    engine.stage(stage(stale.id()));
    f.mounter.unmount(staging); // lost behind the driver's back: its record still says staged
    Volume now = engine.createVolume(fs("now", 20 * MIB));
    engine.stage(stage(now.id())); // another volume is staged at that path now

    engine.createSnapshot("of-stale", stale.id());
    assertThat(f.mounter.log())
        .as("the other volume is not frozen")
        .noneMatch(l -> l.startsWith("freeze"));
    engine.createSnapshot("of-now", now.id());
    assertThat(f.mounter.log()).contains("freeze " + staging);
  }

  @Test
  void stagingAtASecondPathIsRefusedWhileStagedAtTheFirst() {
    Volume volume = engine.createVolume(fs("two", 20 * MIB));
    engine.stage(stage(volume.id()));
    Path second = f.kubelet.resolve("plugins/staging/other");
    StageRequest elsewhere =
        new StageRequest(volume.id(), second, AccessType.FILESYSTEM, "", List.of());

    assertThat(reason(() -> engine.stage(elsewhere))).isEqualTo(Reason.FAILED_PRECONDITION);
    assertThat(f.mounter.mountAt(second)).isEmpty();
    assertThat(f.loops.attached()).hasSize(1);

    engine.unstage(volume.id(), staging);
    engine.stage(elsewhere);
    assertThat(f.mounter.mountAt(second)).isPresent();
  }

  @Test
  void aBlockVolumeStagedAtOnePathIsRefusedAtAnother() {
    Volume volume = engine.createVolume(block("b2", 8 * MIB));
    engine.stage(new StageRequest(volume.id(), staging, AccessType.BLOCK, "", List.of()));
    Path second = f.kubelet.resolve("plugins/staging/other");
    assertThat(
            reason(
                () ->
                    engine.stage(
                        new StageRequest(volume.id(), second, AccessType.BLOCK, "", List.of()))))
        .isEqualTo(Reason.FAILED_PRECONDITION);
    engine.stage(new StageRequest(volume.id(), staging, AccessType.BLOCK, "", List.of()));
    assertThat(f.loops.attached()).hasSize(1);
  }

  @Test
  void aStaleStagingRecordDoesNotBlockStagingElsewhere() {
    Volume volume = engine.createVolume(fs("stale", 20 * MIB));
    engine.stage(stage(volume.id()));
    f.mounter.unmount(staging); // the staging mount vanished behind the driver's back
    Path second = f.kubelet.resolve("plugins/staging/other");
    engine.stage(new StageRequest(volume.id(), second, AccessType.FILESYSTEM, "", List.of()));
    assertThat(f.mounter.mountAt(second)).isPresent();
  }

  @Test
  void blockVolumesBindTheLoopDeviceToAFile() throws Exception {
    Volume volume = engine.createVolume(block("b", 8 * MIB));
    engine.stage(new StageRequest(volume.id(), staging, AccessType.BLOCK, "", List.of()));
    engine.publish(
        new PublishRequest(volume.id(), staging, target, false, AccessType.BLOCK, List.of()));
    assertThat(Files.isRegularFile(target)).isTrue();
    assertThat(f.mounter.mountAt(target).orElseThrow().root()).isEqualTo("/loop0");
    assertThat(f.mounter.log()).noneMatch(l -> l.startsWith("mkfs"));
    assertThat(engine.usage(volume.id(), target).totalBytes()).isEqualTo(8 * MIB);
    assertThat(reason(() -> engine.unstage(volume.id(), staging)))
        .isEqualTo(Reason.FAILED_PRECONDITION); // still published
    engine.unpublish(volume.id(), target);
    engine.unstage(volume.id(), staging);
    assertThat(f.loops.attached()).isEmpty();
  }

  @Test
  void pathsOutsideTheRootsOrTraversingAreInvalid() throws Exception {
    Volume volume = engine.createVolume(fs("a", 20 * MIB));
    Path outside = Files.createDirectories(dir.resolve("elsewhere"));
    Files.createSymbolicLink(f.kubelet.resolve("escape"), outside);
    for (Path bad :
        List.of(
            Path.of("/etc"),
            Path.of("relative/staging"),
            Path.of(f.kubelet + "/../elsewhere/x"),
            f.kubelet.resolve("escape/x"))) {
      assertThat(
              reason(
                  () ->
                      engine.stage(
                          new StageRequest(
                              volume.id(), bad, AccessType.FILESYSTEM, "", List.of()))))
          .isEqualTo(Reason.INVALID_ARGUMENT);
      assertThat(reason(() -> engine.unpublish(volume.id(), bad)))
          .isEqualTo(Reason.INVALID_ARGUMENT);
    }
    assertThat(f.loops.attached()).isEmpty();
    assertThat(outside.toFile().list()).isEmpty();
  }

  @Test
  void wrongTypeFlagsOrOrderAreRejected() {
    Volume volume = engine.createVolume(fs("a", 20 * MIB));
    assertThat(
            reason(
                () ->
                    engine.stage(
                        new StageRequest(
                            volume.id(),
                            staging,
                            AccessType.FILESYSTEM,
                            "",
                            List.of("exec,suid")))))
        .isEqualTo(Reason.INVALID_ARGUMENT);
    assertThat(
            reason(
                () ->
                    engine.stage(
                        new StageRequest(
                            volume.id(), staging, AccessType.FILESYSTEM, "xfs", List.of()))))
        .isEqualTo(Reason.INVALID_ARGUMENT);
    assertThat(
            reason(
                () ->
                    engine.stage(
                        new StageRequest(volume.id(), staging, AccessType.BLOCK, "", List.of()))))
        .isEqualTo(Reason.INVALID_ARGUMENT);
    assertThat(reason(() -> engine.publish(publish(volume.id(), false))))
        .isEqualTo(Reason.FAILED_PRECONDITION); // not staged
    assertThat(reason(() -> engine.stage(stage(Ids.newVolumeId())))).isEqualTo(Reason.NOT_FOUND);
    assertThat(reason(() -> engine.unstage("../../x", staging))).isEqualTo(Reason.NOT_FOUND);
    assertThat(reason(() -> engine.usage(volume.id(), target))).isEqualTo(Reason.NOT_FOUND);
  }

  @Test
  void aVolumeStagedByADriverWhosePoolMountIsGoneIsUnpublishedUnstagedAndDeleted() {
    Volume volume = engine.createVolume(fs("a", 20 * MIB));
    engine.stage(stage(volume.id()));
    engine.publish(publish(volume.id(), false));
    engine.close();
    f.loops.mountGone(f.pool); // the driver's container, with the pool bound in, was killed
    assertThat(f.loops.list().get(0).backingFile())
        .isEqualTo(Path.of("/images/" + volume.id() + ".img"));

    engine = f.open();
    assertThat(engine.findVolume(volume.id()).orElseThrow().condition().abnormal()).isFalse();
    assertThat(engine.expandOnNode(volume.id(), target, 32 * MIB, 0)).isEqualTo(32 * MIB);
    assertThat(f.loops.refreshed()).containsExactly("/dev/loop0");
    assertThat(reason(() -> engine.deleteVolume(volume.id())))
        .as("still attached")
        .isEqualTo(Reason.FAILED_PRECONDITION);
    engine.unpublish(volume.id(), target);
    engine.unstage(volume.id(), staging);
    assertThat(f.loops.attached()).isEmpty();
    assertThat(f.mounter.mounts()).isEmpty();
    engine.deleteVolume(volume.id());
  }

  @Test
  void lostMountShowsAsAbnormalCondition() {
    Volume volume = engine.createVolume(fs("a", 20 * MIB));
    engine.stage(stage(volume.id()));
    f.mounter.unmount(staging); // someone unmounted it behind the driver's back
    VolumeCondition condition = engine.findVolume(volume.id()).orElseThrow().condition();
    assertThat(condition.abnormal()).isTrue();
    assertThat(condition.message()).contains("staging mount");
  }

  @Test
  void nodeExpansionGrowsFileLoopAndFilesystem() throws Exception {
    Volume volume = engine.createVolume(fs("a", 20 * MIB));
    engine.stage(stage(volume.id()));
    engine.publish(publish(volume.id(), false));
    assertThat(engine.expandVolume(volume.id(), 64 * MIB, 0).nodeExpansionRequired()).isTrue();
    assertThat(engine.expandOnNode(volume.id(), target, 64 * MIB, 0)).isEqualTo(64 * MIB);
    assertThat(Files.size(f.image(volume.id()))).isEqualTo(64 * MIB);
    assertThat(f.loops.refreshed()).contains("/dev/loop0");
    assertThat(f.mounter.log()).contains("grow ext4 /dev/loop0 " + target);
    // node-only growth reserves in the pool too
    assertThat(engine.expandOnNode(volume.id(), target, 80 * MIB, 0)).isEqualTo(80 * MIB);
    assertThat(engine.findVolume(volume.id()).orElseThrow().capacityBytes()).isEqualTo(80 * MIB);
  }

  @Test
  void restoredFilesystemIsGrownToItsNewSizeAtStage() {
    for (String fsType : List.of("ext4", "xfs")) {
      Volume volume =
          engine.createVolume(
              new VolumeRequest(
                  "a-" + fsType,
                  300 * MIB,
                  0,
                  "",
                  AccessType.FILESYSTEM,
                  fsType,
                  ContentSource.EMPTY,
                  java.util.Map.of()));
      Snapshot snap = engine.createSnapshot("s-" + fsType, volume.id());
      Volume restored =
          engine.createVolume(
              new VolumeRequest(
                  "r-" + fsType,
                  400 * MIB,
                  0,
                  "",
                  AccessType.FILESYSTEM,
                  fsType,
                  new ContentSource.FromSnapshot(snap.id()),
                  java.util.Map.of()));
      String device = fsType.equals("ext4") ? "/dev/loop0" : "/dev/loop1";
      f.mounter.markFormatted(device, fsType); // the copied image holds the source's filesystem
      Path at = f.kubelet.resolve("staging/" + fsType);
      engine.stage(new StageRequest(restored.id(), at, AccessType.FILESYSTEM, "", List.of()));
      assertThat(f.mounter.log()).noneMatch(l -> l.startsWith("mkfs"));
      if (fsType.equals("ext4")) {
        assertThat(f.mounter.log())
            .containsSubsequence("grow-offline ext4 " + device, "mount " + device + " " + at);
      } else {
        assertThat(f.mounter.log())
            .containsSubsequence("mount " + device + " " + at, "grow xfs " + device + " " + at);
      }
    }
  }
}
