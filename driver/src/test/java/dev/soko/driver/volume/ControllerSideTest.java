package dev.soko.driver.volume;

import static dev.soko.driver.volume.EngineFixture.MIB;
import static dev.soko.driver.volume.EngineFixture.block;
import static dev.soko.driver.volume.EngineFixture.fs;
import static dev.soko.driver.volume.EngineFixture.reason;
import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.driver.model.AccessType;
import dev.soko.driver.model.ContentSource;
import dev.soko.driver.model.Snapshot;
import dev.soko.driver.model.Volume;
import dev.soko.driver.model.VolumeCondition;
import dev.soko.driver.state.Ids;
import dev.soko.driver.volume.StorageException.Reason;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** CreateVolume, DeleteVolume, snapshots, listings and controller expansion over fakes. */
class ControllerSideTest {
  @TempDir java.nio.file.Path dir;

  @Test
  void createsASparseImageAndIsIdempotentByName() throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    String volumeId;
    try (LocalVolumeManager engine = f.open()) {
      assertThat(engine.ready()).isTrue();
      Volume volume = engine.createVolume(fs("pvc-a", 20 * MIB + 1));
      volumeId = volume.id();
      assertThat(volume.capacityBytes()).isEqualTo(21 * MIB);
      assertThat(Ids.isVolumeId(volume.id())).isTrue();
      assertThat(Files.size(f.image(volume.id()))).isEqualTo(21 * MIB);

      assertThat(engine.createVolume(fs("pvc-a", 20 * MIB)).id()).isEqualTo(volume.id());
      assertThat(reason(() -> engine.createVolume(fs("pvc-a", 40 * MIB))))
          .isEqualTo(Reason.ALREADY_EXISTS);
      assertThat(reason(() -> engine.createVolume(block("pvc-a", 20 * MIB))))
          .isEqualTo(Reason.ALREADY_EXISTS);
      VolumeRequest otherParams =
          new VolumeRequest(
              "pvc-a",
              20 * MIB,
              0,
              "",
              AccessType.FILESYSTEM,
              "ext4",
              ContentSource.EMPTY,
              Map.of("tier", "gold"));
      assertThat(reason(() -> engine.createVolume(otherParams))).isEqualTo(Reason.ALREADY_EXISTS);
      assertThat(engine.capacity().get(0).availableBytes()).isEqualTo(1003 * MIB);
    }
    // A clean stop folds the journal into one record file per volume.
    assertThat(Files.readString(f.record(volumeId))).contains("\"state\": \"READY\"");
  }

  @Test
  void rejectsBadRequestsWithClearReasons() {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    try (LocalVolumeManager engine = f.open()) {
      assertThat(reason(() -> engine.createVolume(fs("", MIB)))).isEqualTo(Reason.INVALID_ARGUMENT);
      assertThat(reason(() -> engine.createVolume(fs("x".repeat(600), MIB))))
          .isEqualTo(Reason.INVALID_ARGUMENT);
      VolumeRequest badPool =
          new VolumeRequest(
              "a", MIB, 0, "../other", AccessType.FILESYSTEM, "", ContentSource.EMPTY, Map.of());
      assertThat(reason(() -> engine.createVolume(badPool))).isEqualTo(Reason.INVALID_ARGUMENT);
      VolumeRequest badFs =
          new VolumeRequest(
              "a", MIB, 0, "", AccessType.FILESYSTEM, "vfat", ContentSource.EMPTY, Map.of());
      assertThat(reason(() -> engine.createVolume(badFs))).isEqualTo(Reason.INVALID_ARGUMENT);
      VolumeRequest smallXfs =
          new VolumeRequest(
              "a", MIB, 100 * MIB, "", AccessType.FILESYSTEM, "xfs", ContentSource.EMPTY, Map.of());
      assertThat(reason(() -> engine.createVolume(smallXfs))).isEqualTo(Reason.OUT_OF_RANGE);
      VolumeRequest missingSnapshot =
          new VolumeRequest(
              "a",
              MIB,
              0,
              "",
              AccessType.FILESYSTEM,
              "",
              new ContentSource.FromSnapshot("../x"),
              Map.of());
      assertThat(reason(() -> engine.createVolume(missingSnapshot))).isEqualTo(Reason.NOT_FOUND);
      assertThat(f.pool.resolve("images").toFile().list()).isEmpty();
    }
  }

  @Test
  void fullPoolIsResourceExhaustedAndLeavesNothingBehind() throws Exception {
    EngineFixture f = new EngineFixture(dir, 100 * MIB);
    try (LocalVolumeManager engine = f.open()) {
      engine.createVolume(block("a", 80 * MIB));
      assertThat(reason(() -> engine.createVolume(block("b", 30 * MIB))))
          .isEqualTo(Reason.RESOURCE_EXHAUSTED);
      try (var records = Files.list(f.pool.resolve(".soko/volumes"))) {
        assertThat(records).hasSize(1);
      }
      assertThat(f.pool.resolve("images").toFile().list()).hasSize(1);
      assertThat(engine.capacity().get(0).maximumVolumeBytes()).isEqualTo(20 * MIB);
    }
  }

  @Test
  void deleteIsIdempotentAndRefusesStagedVolumes() throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    try (LocalVolumeManager engine = f.open()) {
      engine.deleteVolume("no-such-volume");
      engine.deleteVolume(Ids.newVolumeId());
      Volume volume = engine.createVolume(block("a", 10 * MIB));
      f.loops.attach(f.image(volume.id()));
      assertThat(reason(() -> engine.deleteVolume(volume.id())))
          .isEqualTo(Reason.FAILED_PRECONDITION);
      f.loops.detach("/dev/loop0");
      engine.deleteVolume(volume.id());
      engine.deleteVolume(volume.id());
      assertThat(f.image(volume.id())).doesNotExist();
      assertThat(f.record(volume.id())).doesNotExist();
      assertThat(engine.findVolume(volume.id())).isEmpty();
      assertThat(engine.capacity().get(0).availableBytes()).isEqualTo(1024 * MIB);
    }
  }

  @Test
  void snapshotAndRestoreCarryTheDataAndGrow() throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    try (LocalVolumeManager engine = f.open()) {
      Volume source = engine.createVolume(block("src", 10 * MIB));
      Files.write(f.image(source.id()), "payload".getBytes(), StandardOpenOption.WRITE);
      Snapshot snap = engine.createSnapshot("snap-1", source.id());
      assertThat(snap.sizeBytes()).isEqualTo(10 * MIB);
      assertThat(engine.createSnapshot("snap-1", source.id())).isEqualTo(snap);
      Volume other = engine.createVolume(block("other", 10 * MIB));
      assertThat(reason(() -> engine.createSnapshot("snap-1", other.id())))
          .isEqualTo(Reason.ALREADY_EXISTS);
      assertThat(reason(() -> engine.createSnapshot("snap-2", Ids.newVolumeId())))
          .isEqualTo(Reason.NOT_FOUND);

      VolumeRequest restore =
          new VolumeRequest(
              "restored",
              30 * MIB,
              0,
              "",
              AccessType.BLOCK,
              "",
              new ContentSource.FromSnapshot(snap.id()),
              Map.of());
      Volume restored = engine.createVolume(restore);
      assertThat(Files.size(f.image(restored.id()))).isEqualTo(30 * MIB);
      assertThat(new String(Files.readAllBytes(f.image(restored.id())), 0, 7)).isEqualTo("payload");
      assertThat(restored.source()).isEqualTo(new ContentSource.FromSnapshot(snap.id()));

      VolumeRequest tooSmall =
          new VolumeRequest(
              "small",
              MIB,
              5 * MIB,
              "",
              AccessType.BLOCK,
              "",
              new ContentSource.FromSnapshot(snap.id()),
              Map.of());
      assertThat(reason(() -> engine.createVolume(tooSmall))).isEqualTo(Reason.OUT_OF_RANGE);
      VolumeRequest asFilesystem =
          new VolumeRequest(
              "fs",
              30 * MIB,
              0,
              "",
              AccessType.FILESYSTEM,
              "ext4",
              new ContentSource.FromSnapshot(snap.id()),
              Map.of());
      assertThat(reason(() -> engine.createVolume(asFilesystem)))
          .isEqualTo(Reason.INVALID_ARGUMENT);

      VolumeRequest clone =
          new VolumeRequest(
              "clone",
              0,
              0,
              "",
              AccessType.BLOCK,
              "",
              new ContentSource.FromVolume(source.id()),
              Map.of());
      Volume cloned = engine.createVolume(clone);
      assertThat(new String(Files.readAllBytes(f.image(cloned.id())), 0, 7)).isEqualTo("payload");

      engine.deleteSnapshot(snap.id());
      engine.deleteSnapshot(snap.id());
      engine.deleteSnapshot("garbage");
      assertThat(engine.listSnapshots(SnapshotFilter.ALL, "", 0).items()).isEmpty();
    }
  }

  @Test
  void snapshotOfAStagedFilesystemFreezesIt() throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    try (LocalVolumeManager engine = f.open()) {
      Volume volume = engine.createVolume(fs("a", 20 * MIB));
      java.nio.file.Path staging = f.kubelet.resolve("staging/a");
      engine.stage(new StageRequest(volume.id(), staging, AccessType.FILESYSTEM, "", List.of()));
      engine.createSnapshot("s", volume.id());
      assertThat(f.mounter.log()).containsSubsequence("freeze " + staging, "unfreeze " + staging);
    }
  }

  @Test
  void listingsPageByIdAndFilter() {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    try (LocalVolumeManager engine = f.open()) {
      Set<String> created = new HashSet<>();
      for (int i = 0; i < 5; i++) {
        created.add(engine.createVolume(block("v" + i, MIB)).id());
      }
      Set<String> seen = new HashSet<>();
      String token = "";
      int pages = 0;
      do {
        Page<Volume> page = engine.listVolumes(token, 2);
        page.items().forEach(v -> seen.add(v.id()));
        token = page.nextToken();
        pages++;
      } while (!token.isEmpty());
      assertThat(pages).isEqualTo(3);
      assertThat(seen).isEqualTo(created);
      assertThat(reason(() -> engine.listVolumes("bogus", 2))).isEqualTo(Reason.ABORTED);

      String source = created.iterator().next();
      Snapshot s1 = engine.createSnapshot("s1", source);
      engine.createSnapshot(
          "s2", created.stream().filter(id -> !id.equals(source)).findFirst().get());
      assertThat(engine.listSnapshots(new SnapshotFilter("", source), "", 0).items())
          .containsExactly(s1);
      assertThat(engine.listSnapshots(new SnapshotFilter(s1.id(), ""), "", 0).items())
          .containsExactly(s1);
      assertThat(engine.listSnapshots(new SnapshotFilter("nope", ""), "", 0).items()).isEmpty();
      assertThat(engine.listSnapshots(SnapshotFilter.ALL, "", 1).nextToken()).isNotEmpty();
    }
  }

  @Test
  void controllerExpansionReservesAndNeverShrinks() throws Exception {
    EngineFixture f = new EngineFixture(dir, 200 * MIB);
    try (LocalVolumeManager engine = f.open()) {
      Volume volume = engine.createVolume(fs("a", 50 * MIB));
      ExpandResult grown = engine.expandVolume(volume.id(), 100 * MIB, 0);
      assertThat(grown).isEqualTo(new ExpandResult(100 * MIB, true));
      assertThat(Files.size(f.image(volume.id()))).isEqualTo(100 * MIB);
      assertThat(engine.findVolume(volume.id()).orElseThrow().capacityBytes()).isEqualTo(100 * MIB);
      assertThat(engine.expandVolume(volume.id(), 80 * MIB, 0).capacityBytes())
          .isEqualTo(100 * MIB);
      assertThat(reason(() -> engine.expandVolume(volume.id(), 0, 60 * MIB)))
          .isEqualTo(Reason.OUT_OF_RANGE);
      // No room: OUT_OF_RANGE, which the resizer takes as infeasible, as on the node's paths.
      assertThat(reason(() -> engine.expandVolume(volume.id(), 500 * MIB, 0)))
          .isEqualTo(Reason.OUT_OF_RANGE);
      assertThat(reason(() -> engine.expandVolume(Ids.newVolumeId(), MIB, 0)))
          .isEqualTo(Reason.NOT_FOUND);
      Volume raw = engine.createVolume(block("b", 10 * MIB));
      assertThat(engine.expandVolume(raw.id(), 20 * MIB, 0).nodeExpansionRequired()).isFalse();
    }
  }

  @Test
  void missingImageMakesTheVolumeAbnormalNotGone() throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    try (LocalVolumeManager engine = f.open()) {
      Volume volume = engine.createVolume(block("a", MIB));
      assertThat(engine.findVolume(volume.id()).orElseThrow().condition().abnormal()).isFalse();
      Files.delete(f.image(volume.id()));
      VolumeCondition condition = engine.findVolume(volume.id()).orElseThrow().condition();
      assertThat(condition.abnormal()).isTrue();
      assertThat(condition.message()).contains("image");
    }
  }

  @Test
  void concurrentDuplicateCreatesYieldOneVolume() throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    try (LocalVolumeManager engine = f.open()) {
      ExecutorService threads = Executors.newFixedThreadPool(8);
      List<Callable<String>> calls =
          java.util.Collections.nCopies(16, () -> engine.createVolume(block("same", MIB)).id());
      Set<String> ids = new HashSet<>();
      for (Future<String> result : threads.invokeAll(calls)) {
        ids.add(result.get());
      }
      threads.shutdown();
      assertThat(ids).hasSize(1);
      assertThat(f.pool.resolve("images").toFile().list()).hasSize(1);
    }
  }
}
