package dev.soko.driver.volume;

import static dev.soko.driver.volume.EngineFixture.reason;
import static dev.soko.driver.volume.HostFixture.MIB;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.soko.driver.exec.ProcessExec;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.model.ContentSource;
import dev.soko.driver.model.Snapshot;
import dev.soko.driver.model.Volume;
import dev.soko.driver.mount.Losetup;
import dev.soko.driver.pool.Pool;
import dev.soko.driver.pool.VolumeLayout;
import dev.soko.driver.testing.OnlineExt4Growth;
import dev.soko.driver.volume.StorageException.Reason;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The engine on real loop devices, filesystems and mounts (needs root; fails without it). */
class LocalVolumeManagerIT {
  private static final VolumeLayout IMAGES = new VolumeLayout("images", ".img");

  @RegisterExtension static final HostFixture host = new HostFixture();

  private static VolumeRequest fs(String name, String pool, String fsType, long bytes) {
    return new VolumeRequest(
        name, bytes, 0, pool, AccessType.FILESYSTEM, fsType, ContentSource.EMPTY, Map.of());
  }

  private static Path staging(String name) {
    return host.kubelet.resolve("plugins/csi.soko.dev/staging/" + name);
  }

  private static Path target(String name) {
    return host.kubelet.resolve("pods/pod-" + name + "/volumes/" + name + "/mount");
  }

  private static void stageAndPublish(VolumeManager engine, Volume v, boolean readOnly) {
    engine.stage(new StageRequest(v.id(), staging(v.name()), v.accessType(), "", List.of()));
    engine.publish(
        new PublishRequest(
            v.id(), staging(v.name()), target(v.name()), readOnly, v.accessType(), List.of()));
  }

  private static void teardown(VolumeManager engine, Volume v) {
    engine.unpublish(v.id(), target(v.name()));
    engine.unstage(v.id(), staging(v.name()));
    engine.deleteVolume(v.id());
  }

  private static String sha256(byte[] data) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
  }

  @Test
  void theXfsPoolOnALoopDeviceSupportsReflinkAndTheHostPoolDoesNot() {
    var config = host.config(4096 * MIB);
    try (Pool xfs = Pool.open(config.pools().get(0), IMAGES, new ProcessExec());
        Pool host = Pool.open(config.pools().get(1), IMAGES, new ProcessExec())) {
      assertThat(xfs.reflink()).isTrue();
      assertThat(host.reflink()).isFalse();
    }
  }

  @Test
  void ext4AndXfsVolumesHoldDataAndHonourReadOnly() throws Exception {
    try (LocalVolumeManager engine = host.open()) {
      for (String fsType : List.of("ext4", "xfs")) {
        Volume v = engine.createVolume(fs("rw-" + fsType, "xfs", fsType, 32 * MIB));
        assertThat(v.capacityBytes()).isEqualTo(fsType.equals("xfs") ? 300 * MIB : 32 * MIB);
        stageAndPublish(engine, v, false);
        Files.writeString(target(v.name()).resolve("hello.txt"), "data on " + fsType);
        assertThat(Files.readString(staging(v.name()).resolve("hello.txt")))
            .isEqualTo("data on " + fsType);
        assertThat(host.sh("findmnt", "-n", "-o", "FSTYPE", staging(v.name()).toString()).strip())
            .isEqualTo(fsType);

        VolumeUsage usage = engine.usage(v.id(), target(v.name()));
        assertThat(usage.totalBytes()).isBetween(v.capacityBytes() / 2, v.capacityBytes());
        assertThat(usage.usedBytes()).isPositive();
        assertThat(usage.totalInodes()).isPositive();
        assertThat(usage.condition().abnormal()).isFalse();

        Path readOnly = host.kubelet.resolve("pods/ro-" + fsType + "/mount");
        engine.publish(
            new PublishRequest(
                v.id(),
                staging(v.name()),
                readOnly,
                true,
                AccessType.FILESYSTEM,
                List.of("noatime")));
        assertThat(Files.readString(readOnly.resolve("hello.txt"))).isEqualTo("data on " + fsType);
        assertThatThrownBy(() -> Files.writeString(readOnly.resolve("x"), "no"))
            .isInstanceOf(java.io.IOException.class)
            .hasMessageContaining("Read-only");
        engine.unpublish(v.id(), readOnly);
        assertThat(readOnly).doesNotExist();

        teardown(engine, v);
        assertThat(host.loopsBelowBase()).hasSize(1); // only the XFS pool's own device
        assertThat(host.mountsBelowBase()).hasSize(1);
      }
    }
  }

  @Test
  void snapshotRestoreAndCloneKeepDataOnReflinkAndSparsePools() throws Exception {
    byte[] data = new byte[4 * (int) MIB];
    new Random(42).nextBytes(data);
    try (LocalVolumeManager engine = host.open()) {
      for (String pool : List.of("xfs", "host")) {
        for (String fsType : List.of("ext4", "xfs")) {
          String tag = pool + "-" + fsType;
          long size = fsType.equals("xfs") ? 300 * MIB : 32 * MIB;
          Volume v = engine.createVolume(fs("src-" + tag, pool, fsType, size));
          stageAndPublish(engine, v, false);
          Files.write(target(v.name()).resolve("blob"), data);

          Snapshot snap = engine.createSnapshot("snap-" + tag, v.id()); // taken while mounted
          Files.writeString(target(v.name()).resolve("after-snapshot"), "not in the snapshot");

          VolumeRequest restore =
              new VolumeRequest(
                  "restored-" + tag,
                  size + 64 * MIB,
                  0,
                  pool,
                  AccessType.FILESYSTEM,
                  fsType,
                  new ContentSource.FromSnapshot(snap.id()),
                  Map.of());
          Volume restored = engine.createVolume(restore);
          stageAndPublish(engine, restored, false); // mounted beside its source (same fs UUID)
          assertThat(sha256(Files.readAllBytes(target(restored.name()).resolve("blob"))))
              .isEqualTo(sha256(data));
          assertThat(target(restored.name()).resolve("after-snapshot")).doesNotExist();
          assertThat(engine.usage(restored.id(), target(restored.name())).totalBytes())
              .as("the restored %s filesystem grew to its larger volume", fsType)
              .isGreaterThan(engine.usage(v.id(), target(v.name())).totalBytes() + 48 * MIB);

          VolumeRequest clone =
              new VolumeRequest(
                  "clone-" + tag,
                  0,
                  0,
                  pool,
                  AccessType.FILESYSTEM,
                  fsType,
                  new ContentSource.FromVolume(v.id()),
                  Map.of());
          Volume cloned = engine.createVolume(clone);
          stageAndPublish(engine, cloned, false);
          assertThat(sha256(Files.readAllBytes(target(cloned.name()).resolve("blob"))))
              .isEqualTo(sha256(data));
          assertThat(Files.readString(target(cloned.name()).resolve("after-snapshot")))
              .isEqualTo("not in the snapshot");

          for (Volume each : List.of(cloned, restored, v)) {
            teardown(engine, each);
          }
          engine.deleteSnapshot(snap.id());
        }
      }
      assertThat(engine.listVolumes("", 0).items()).isEmpty();
    }
  }

  @Test
  void onlineExpansionReallyGrowsXfs() throws Exception {
    growsWhilePublished("xfs", false);
  }

  @Test
  void onlineExpansionReallyGrowsExt4() throws Exception {
    assumeTrue(OnlineExt4Growth.permitted(), OnlineExt4Growth.WITHHELD);
    growsWhilePublished("ext4", false);
  }

  /**
   * Without CAP_SYS_RESOURCE the kernel refuses to grow a mounted ext4: the node call must say so
   * clearly, and the filesystem must grow at the next stage.
   */
  @Test
  void withoutCapSysResourceAMountedExt4IsRefusedAndGrowsAtTheNextStage() throws Exception {
    assumeFalse(OnlineExt4Growth.permitted(), OnlineExt4Growth.PERMITTED);
    growsWhilePublished("ext4", true);
  }

  /**
   * A published volume of {@code fsType} grown by 128 MiB: online, or, when {@code refused},
   * refused online and grown when staged again.
   */
  private void growsWhilePublished(String fsType, boolean refused) throws Exception {
    try (LocalVolumeManager engine = host.open()) {
      long before = fsType.equals("xfs") ? 300 * MIB : 32 * MIB;
      long after = before + 128 * MIB;
      Volume v = engine.createVolume(fs("grow-" + fsType, "xfs", fsType, before));
      stageAndPublish(engine, v, false);
      Files.writeString(target(v.name()).resolve("keep"), "still here");
      long sizeBefore = engine.usage(v.id(), target(v.name())).totalBytes();

      ExpandResult result = engine.expandVolume(v.id(), after, 0);
      assertThat(result).isEqualTo(new ExpandResult(after, true));
      if (refused) {
        assertThat(reason(() -> engine.expandOnNode(v.id(), target(v.name()), after, 0)))
            .isEqualTo(Reason.FAILED_PRECONDITION);
        engine.unpublish(v.id(), target(v.name()));
        engine.unstage(v.id(), staging(v.name()));
        stageAndPublish(engine, v, false);
      } else {
        assertThat(engine.expandOnNode(v.id(), target(v.name()), after, 0)).isEqualTo(after);
      }

      long sizeAfter = engine.usage(v.id(), target(v.name())).totalBytes();
      assertThat(sizeAfter - sizeBefore).isGreaterThan(100 * MIB);
      String device =
          new Losetup().devicesFor(host.xfsPool.resolve("images/" + v.id() + ".img")).get(0);
      assertThat(Long.parseLong(host.sh("blockdev", "--getsize64", device).strip()))
          .isEqualTo(after);
      assertThat(Files.readString(target(v.name()).resolve("keep"))).isEqualTo("still here");
      teardown(engine, v);
    }
  }

  @Test
  void blockVolumeIsADeviceAtTheTargetAndGrows() throws Exception {
    try (LocalVolumeManager engine = host.open()) {
      Volume v =
          engine.createVolume(
              new VolumeRequest(
                  "raw", 16 * MIB, 0, "xfs", AccessType.BLOCK, "", ContentSource.EMPTY, Map.of()));
      stageAndPublish(engine, v, false);
      Path device = target(v.name());
      assertThat(host.sh("stat", "-c", "%F", device.toString()).strip())
          .isEqualTo("block special file");
      byte[] pattern = new byte[(int) MIB];
      new Random(7).nextBytes(pattern);
      Path source = host.base.resolve("pattern");
      Files.write(source, pattern);
      host.sh(
          "dd",
          "if=" + source,
          "of=" + device,
          "bs=1M",
          "count=1",
          "oflag=direct",
          "conv=fsync,notrunc",
          "status=none");
      byte[] image = Files.readAllBytes(host.xfsPool.resolve("images/" + v.id() + ".img"));
      assertThat(sha256(java.util.Arrays.copyOf(image, (int) MIB))).isEqualTo(sha256(pattern));

      assertThat(engine.expandVolume(v.id(), 48 * MIB, 0).nodeExpansionRequired()).isTrue();
      engine.expandOnNode(v.id(), device, 48 * MIB, 0);
      assertThat(Long.parseLong(host.sh("blockdev", "--getsize64", device.toString()).strip()))
          .isEqualTo(48 * MIB);
      assertThat(engine.usage(v.id(), device).totalBytes()).isEqualTo(48 * MIB);
      teardown(engine, v);
      assertThat(device).doesNotExist();
    }
  }

  @Test
  void hostileRequestsTouchNothingOutsideThePoolAndRoots() throws Exception {
    Path outside = Files.createDirectories(host.base.resolve("outside"));
    Files.createSymbolicLink(host.kubelet.resolve("evil"), outside);
    try (LocalVolumeManager engine = host.open()) {
      Volume v = engine.createVolume(fs("../../../../etc/passwd", "xfs", "ext4", 16 * MIB));
      assertThat(host.xfsPool.resolve("images/" + v.id() + ".img")).exists();
      for (Path bad :
          List.of(
              host.kubelet.resolve("evil/staging"),
              Path.of(host.kubelet + "/../outside/x"),
              Path.of("/etc"),
              Path.of("/tmp/x"))) {
        assertThat(
                reason(
                    () ->
                        engine.stage(
                            new StageRequest(v.id(), bad, AccessType.FILESYSTEM, "", List.of()))))
            .isEqualTo(Reason.INVALID_ARGUMENT);
      }
      engine.stage(
          new StageRequest(
              v.id(), staging(v.name().replace('/', '_')), AccessType.FILESYSTEM, "", List.of()));
      assertThat(
              reason(
                  () ->
                      engine.publish(
                          new PublishRequest(
                              v.id(),
                              staging(v.name().replace('/', '_')),
                              host.kubelet.resolve("evil/target"),
                              false,
                              AccessType.FILESYSTEM,
                              List.of()))))
          .isEqualTo(Reason.INVALID_ARGUMENT);
      assertThat(
              reason(
                  () ->
                      engine.publish(
                          new PublishRequest(
                              v.id(),
                              staging(v.name().replace('/', '_')),
                              target("t"),
                              false,
                              AccessType.FILESYSTEM,
                              List.of("noatime,context=foo")))))
          .isEqualTo(Reason.INVALID_ARGUMENT);
      engine.deleteVolume("../../../../etc/passwd");
      engine.deleteVolume("/etc/passwd");
      assertThat(Path.of("/etc/passwd")).exists();
      assertThat(outside.toFile().list()).isEmpty();
      assertThat(host.mountsBelowBase()).noneMatch(m -> m.mountPoint().startsWith(outside));
      engine.unstage(v.id(), staging(v.name().replace('/', '_')));
      engine.deleteVolume(v.id());
    }
  }

  @Test
  void restartAfterSimulatedCrashesCleansUpAndKeepsStagedVolumes() throws Exception {
    Path images = host.xfsPool.resolve("images");
    Volume kept;
    try (LocalVolumeManager engine = host.open()) {
      kept = engine.createVolume(fs("kept", "xfs", "ext4", 16 * MIB));
      stageAndPublish(engine, kept, false);
      Files.writeString(target(kept.name()).resolve("f"), "survives");
    }
    // Leftovers of kill -9 at various points: an image without a record, attached; a deleted image
    // still attached; a half-written record.
    Losetup losetup = new Losetup();
    Path orphan = images.resolve(dev.soko.driver.state.Ids.newVolumeId() + ".img");
    Files.write(orphan, new byte[(int) MIB]);
    String orphanLoop = losetup.attach(orphan);
    Path gone = images.resolve(dev.soko.driver.state.Ids.newVolumeId() + ".img");
    Files.write(gone, new byte[(int) MIB]);
    String goneLoop = losetup.attach(gone);
    Files.delete(gone);
    Path temp =
        host.xfsPool.resolve(
            ".soko/volumes/." + dev.soko.driver.state.Ids.newVolumeId() + ".json.tmp");
    Files.writeString(temp, "{\"id\": ");

    try (LocalVolumeManager engine = host.open()) {
      Recovery.Report report = engine.recoveryReports().get(0);
      assertThat(report.orphanImagesRemoved()).isEqualTo(1);
      assertThat(report.staleLoopDevicesDetached()).isEqualTo(2);
      assertThat(report.tempRecordsRemoved()).isEqualTo(1);
      assertThat(orphan).doesNotExist();
      assertThat(temp).doesNotExist();
      List<String> loops = host.loopsBelowBase();
      assertThat(loops).doesNotContain(orphanLoop, goneLoop);

      Volume found = engine.findVolume(kept.id()).orElseThrow();
      assertThat(found.condition().abnormal()).isFalse();
      assertThat(Files.readString(target(kept.name()).resolve("f"))).isEqualTo("survives");
      teardown(engine, kept);
    }
  }
}
