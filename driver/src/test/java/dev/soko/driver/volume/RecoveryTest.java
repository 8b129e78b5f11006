package dev.soko.driver.volume;

import static dev.soko.driver.volume.EngineFixture.MIB;
import static dev.soko.driver.volume.EngineFixture.block;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import dev.soko.driver.model.AccessType;
import dev.soko.driver.model.ContentSource;
import dev.soko.driver.model.Snapshot;
import dev.soko.driver.model.Volume;
import dev.soko.driver.state.Ids;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Restarts over a pool left in each state a crash can leave it in. */
class RecoveryTest {
  @TempDir Path dir;

  @Test
  void cleanPoolNeedsNoRepair() {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    try (LocalVolumeManager engine = f.open()) {
      engine.createVolume(block("a", MIB));
    }
    try (LocalVolumeManager engine = f.open()) {
      Recovery.Report report = engine.recoveryReports().get(0);
      assertThat(report.repairedAnything()).isFalse();
      assertThat(report.volumes()).isEqualTo(1);
      assertThat(engine.listVolumes("", 0).items()).hasSize(1);
      assertThat(engine.capacity().get(0).availableBytes()).isEqualTo(1023 * MIB);
    }
  }

  @Test
  void everyCrashLeftoverIsResolved() throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    String kept;
    String lost;
    String halfCreated;
    String halfDeleted;
    String snapshotOfKept;
    String snapshotLost;
    try (LocalVolumeManager engine = f.open()) {
      kept = engine.createVolume(block("kept", MIB)).id();
      lost = engine.createVolume(block("lost", MIB)).id();
      halfCreated = engine.createVolume(block("half-created", MIB)).id();
      halfDeleted = engine.createVolume(block("half-deleted", MIB)).id();
      snapshotOfKept = engine.createSnapshot("s", kept).id();
      snapshotLost = engine.createSnapshot("s-lost", kept).id();
    }
    // Rewrite records into the states a kill -9 mid-operation leaves behind.
    rewriteState(f.record(halfCreated), "CREATING");
    rewriteState(f.record(halfDeleted), "DELETING");
    Files.delete(f.image(lost));
    Files.delete(f.pool.resolve("snapshots/" + snapshotLost + ".img"));
    Path tempRecord = f.pool.resolve(".soko/volumes/." + Ids.newVolumeId() + ".json.tmp");
    Files.writeString(tempRecord, "{\"id\": \"vol-");
    Path orphan = f.image(Ids.newVolumeId());
    Files.write(orphan, new byte[4096]);
    Path corrupt = f.pool.resolve(".soko/snapshots/" + Ids.newSnapshotId() + ".json");
    Files.writeString(corrupt, "not json");
    f.loops.attach(orphan); // an orphan attached before the crash
    String keptLoop = f.loops.attach(f.image(kept));

    try (LocalVolumeManager engine = f.open()) {
      Recovery.Report report = engine.recoveryReports().get(0);
      assertThat(report.tempRecordsRemoved()).isEqualTo(1);
      assertThat(report.unfinishedCreatesRolledBack()).isEqualTo(1);
      assertThat(report.unfinishedDeletesFinished()).isEqualTo(1);
      assertThat(report.orphanImagesRemoved()).isEqualTo(1);
      assertThat(report.volumesMissingImages()).isEqualTo(1);
      assertThat(report.snapshotsMissingImages()).isEqualTo(1);
      assertThat(report.staleLoopDevicesDetached()).isEqualTo(1);
      assertThat(report.corruptRecordsQuarantined()).isEqualTo(1);

      assertThat(tempRecord).doesNotExist();
      assertThat(orphan).doesNotExist();
      assertThat(f.image(halfCreated)).doesNotExist();
      assertThat(f.record(halfCreated)).doesNotExist();
      assertThat(f.record(halfDeleted)).doesNotExist();
      assertThat(Path.of(corrupt + ".corrupt")).exists();
      assertThat(f.loops.attached()).containsOnlyKeys(keptLoop);

      assertThat(engine.findVolume(kept).orElseThrow().condition().abnormal()).isFalse();
      assertThat(engine.findVolume(lost).orElseThrow().condition().abnormal()).isTrue();
      assertThat(engine.findVolume(halfCreated)).isEmpty();
      assertThat(engine.listSnapshots(SnapshotFilter.ALL, "", 0).items())
          .as("a snapshot without its image is kept, like a volume, and no longer ready to use")
          .extracting(Snapshot::id, Snapshot::readyToUse)
          .containsExactlyInAnyOrder(tuple(snapshotOfKept, true), tuple(snapshotLost, false));
      // accounting counts what the records hold: two 1 MiB volumes and two 1 MiB snapshots
      assertThat(engine.capacity().get(0).availableBytes()).isEqualTo(1020 * MIB);
      // the half-created volume's name is free again
      assertThat(engine.createVolume(block("half-created", MIB)).id()).isNotEqualTo(halfCreated);
    }
  }

  @Test
  void aBlankImageThatAPowerLossTookIsMadeAgainButACopyIsNot() throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    LocalVolumeManager crashed = f.open(); // never closed: the process dies with it
    String blank = crashed.createVolume(block("blank", 4 * MIB)).id();
    String shortened = crashed.createVolume(block("shortened", 4 * MIB)).id();
    String snapshot = crashed.createSnapshot("s", blank).id();
    String restored =
        crashed
            .createVolume(
                new VolumeRequest(
                    "restored",
                    4 * MIB,
                    0,
                    "",
                    AccessType.BLOCK,
                    "",
                    new ContentSource.FromSnapshot(snapshot),
                    java.util.Map.of()))
            .id();
    // What a power loss can do to files that were never flushed, while the journal survives.
    Files.delete(f.image(blank));
    try (var file = new java.io.RandomAccessFile(f.image(shortened).toFile(), "rw")) {
      file.setLength(0);
    }
    Files.delete(f.image(restored)); // a copy is flushed before its record: this is real loss

    try (LocalVolumeManager engine = f.open()) {
      Recovery.Report report = engine.recoveryReports().get(0);
      assertThat(report.blankImagesRemade()).isEqualTo(2);
      assertThat(report.volumesMissingImages()).isEqualTo(1);
      assertThat(Files.size(f.image(blank))).isEqualTo(4 * MIB);
      assertThat(Files.size(f.image(shortened))).isEqualTo(4 * MIB);
      assertThat(engine.findVolume(blank).orElseThrow().condition().abnormal()).isFalse();
      assertThat(engine.findVolume(restored).orElseThrow().condition().abnormal()).isTrue();
    }
    // Once checkpointed, a missing image is never remade: it is reported.
    Files.delete(f.image(blank));
    try (LocalVolumeManager engine = f.open()) {
      assertThat(engine.recoveryReports().get(0).blankImagesRemade()).isZero();
      assertThat(engine.findVolume(blank).orElseThrow().condition().abnormal()).isTrue();
    }
  }

  @Test
  void staleLoopStillMountedIsReportedNotDetachedAndLostStagingIsReported() throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    String staged;
    try (LocalVolumeManager engine = f.open()) {
      Volume v = engine.createVolume(EngineFixture.fs("a", 20 * MIB));
      staged = v.id();
      engine.stage(
          new StageRequest(
              v.id(),
              f.kubelet.resolve("staging/a"),
              AccessType.FILESYSTEM,
              "",
              java.util.List.of()));
    }
    Path orphan = f.image(Ids.newVolumeId());
    Files.write(orphan, new byte[4096]);
    String orphanLoop = f.loops.attach(orphan);
    f.mounter.mount(orphanLoop, f.kubelet.resolve("somewhere"), "ext4", java.util.List.of());
    f.mounter.unmount(f.kubelet.resolve("staging/a")); // as after a reboot
    try (LocalVolumeManager engine = f.open()) {
      Recovery.Report report = engine.recoveryReports().get(0);
      assertThat(report.staleLoopDevicesInUse()).isEqualTo(1);
      assertThat(report.staleLoopDevicesDetached()).isZero();
      assertThat(report.stagedVolumesLostTheirMount()).isEqualTo(1);
      assertThat(f.loops.attached()).containsKey(orphanLoop);
      assertThat(engine.findVolume(staged).orElseThrow().condition().abnormal()).isTrue();
    }
  }

  @Test
  void devicesAttachedThroughAPoolMountThatIsGoneAreToldApartByIdentity() throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    String kept;
    try (LocalVolumeManager engine = f.open()) {
      kept = engine.createVolume(block("kept", MIB)).id();
    }
    Path orphan = f.image(Ids.newVolumeId());
    Files.write(orphan, new byte[4096]);
    Path elsewhere = Files.createDirectories(dir.resolve("other-pool/images"));
    Path notOurs = Files.write(elsewhere.resolve(orphan.getFileName()), new byte[4096]);
    String keptLoop = f.loops.attach(f.image(kept));
    String orphanLoop = f.loops.attach(orphan);
    String otherLoop = f.loops.attach(notOurs);
    // Both pools were bound into a driver container that was killed.
    f.loops.mountGone(f.pool);
    f.loops.mountGone(dir.resolve("other-pool"));

    try (LocalVolumeManager engine = f.open()) {
      Recovery.Report report = engine.recoveryReports().get(0);
      assertThat(report.orphanImagesRemoved()).isEqualTo(1);
      assertThat(report.staleLoopDevicesDetached())
          .as("the orphan's device, told while its file was still there")
          .isEqualTo(1);
      assertThat(f.loops.attached()).containsOnlyKeys(keptLoop, otherLoop);
      assertThat(report.stagedVolumesLostTheirMount()).isZero();
    }
  }

  @Test
  void aPoolThatIsNotUsableYetKeepsProbeNotReadyUntilItIs() throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    // The pool passes its checks but cannot be laid out (a refused pool leaves Probe ready).
    Path blocker = f.pool.resolve("images");
    Files.writeString(blocker, "a file where the images directory should be");
    try (LocalVolumeManager engine = f.open()) {
      assertThat(engine.ready()).isFalse();
      // The reason names the pool, not its path or error: /healthz may answer off the node.
      assertThat(engine.notReady())
          .hasValue("pools not usable yet: main (the driver log says why)");
      assertThat(EngineFixture.reason(() -> engine.createVolume(block("a", MIB))))
          .isEqualTo(StorageException.Reason.UNAVAILABLE);
      Files.delete(blocker);
      assertThat(engine.notReady()).isEmpty();
      assertThat(engine.ready()).isTrue();
      assertThat(engine.createVolume(block("a", MIB)).pool()).isEqualTo("main");
    }
  }

  @Test
  void aVolumeWithAStaleStagedMarkButNoAttachmentCanBeDeleted() {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    try (LocalVolumeManager engine = f.open()) {
      Volume v = engine.createVolume(block("a", MIB));
      engine.stage(
          new StageRequest(
              v.id(), f.kubelet.resolve("staging/a"), AccessType.BLOCK, "", java.util.List.of()));
      f.loops.detach("/dev/loop0"); // a reboot took the loop device away
      engine.deleteVolume(v.id());
      assertThat(engine.findVolume(v.id())).isEmpty();
    }
  }

  private static void rewriteState(Path record, String state) throws Exception {
    String text = Files.readString(record);
    Files.writeString(record, text.replace("\"state\": \"READY\"", "\"state\": \"" + state + "\""));
  }
}
