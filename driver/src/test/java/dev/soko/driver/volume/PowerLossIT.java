package dev.soko.driver.volume;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.model.ContentSource;
import dev.soko.driver.model.Volume;
import dev.soko.driver.mount.Losetup;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Power cuts, where {@link CrashConsistencyIT} only kills the process: a kill leaves the page
 * cache, a power cut loses every write that was not flushed. The pool lives on its own "disk", an
 * image file on a reflink-capable XFS, attached through a loop device. While {@link CrashWorkload}
 * runs, the test clones that image (FICLONE, which the loop device's writes cannot interleave
 * with): the clone holds exactly what had reached the disk, and none of what was still in the pool
 * filesystem's cache. Each clone is then mounted (the pool's filesystem replays its log, as after a
 * reboot) and the engine opened on it: everything the client was answered before the clone began
 * must be there, nothing begun after it, and nothing may leak ({@link CrashAudit}).
 *
 * <p>Both tests run once per pool backend: an image-file pool on an XFS disk (raw block volumes in
 * the first test, an ext4 volume in the second), and a btrfs-subvolume pool on a btrfs disk with
 * quotas on (btrfs volumes; the first test also checks each volume's qgroup limit, since a
 * subvolume create and a limit reach the disk only with the filesystem's next commit). The second
 * test is about an application's data: a writer appends records to a file in a published volume,
 * each one fdatasynced before it counts as written; every clone of the pool's disk must hold every
 * record counted before the clone began.
 */
class PowerLossIT {
  private static final int CUTS = 8;

  /** A new fixture for each test: a power cut's leftovers must not meet the next test. */
  @RegisterExtension final HostFixture host = new HostFixture();

  /** A power cut: the disk as it was between two offsets of the client's log. */
  private record Cut(Path image, long logBefore, long logAfter) {}

  @ParameterizedTest(name = "{0}")
  @EnumSource(PoolConfig.Backend.class)
  void aPowerCutLosesNothingAnsweredAndLeaksNothing(PoolConfig.Backend backend) throws Exception {
    Path live = mountLiveDisk(backend);
    Path log = host.base.resolve("client.log");

    List<Cut> cuts = new ArrayList<>();
    Process workload = startWorkload(live.resolve("pool"), log, host.base, backend);
    try {
      Random random = new Random(1009);
      Thread.sleep(1500); // past the JVM's start, so that most cuts land among operations
      for (int i = 0; i < CUTS; i++) {
        Thread.sleep(100 + random.nextInt(300));
        long before = Files.size(log);
        Path image = cutPower(i);
        cuts.add(new Cut(image, before, Files.size(log)));
      }
      assertThat(workload.isAlive()).as("the workload ran through every cut").isTrue();
    } finally {
      workload.destroyForcibly();
      assertThat(workload.waitFor(10, TimeUnit.SECONDS)).isTrue();
    }

    ClientLog told = ClientLog.parse(Files.readString(log));
    int acknowledged = 0;
    for (int i = 0; i < cuts.size(); i++) {
      Cut cut = cuts.get(i);
      ClientLog.Expectations expected = told.between(cut.logBefore(), cut.logAfter());
      acknowledged = expected.acknowledged;
      Path mountPoint = host.base.resolve("cut-" + i);
      String device = bootClone(backend, cut.image(), mountPoint);
      // The pool's directory is the admin's, not the driver's: a cut taken before the workload's
      // mkdir reached the disk holds no pool yet, and no acknowledged volume either.
      Path pool = Files.createDirectories(mountPoint.resolve("pool"));
      try (LocalVolumeManager engine =
          LocalVolumeManager.open(CrashWorkload.engineConfig(pool, host.base, backend))) {
        CrashAudit.verify(engine, new PoolLayout(pool, backend), expected);
      }
      host.sh("umount", mountPoint.toString());
      new Losetup().detach(device);
      Files.delete(cut.image());
    }
    assertThat(acknowledged).as("operations answered before the last cut").isGreaterThan(20);
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(PoolConfig.Backend.class)
  void dataAnApplicationFsyncedInAVolumeSurvivesAPowerCut(PoolConfig.Backend backend)
      throws Exception {
    Path live = mountLiveDisk(backend);
    Path staging = host.base.resolve("staging");
    Path target = host.base.resolve("target");
    List<Cut> cuts = new ArrayList<>();
    String volumeId;
    // The pool is a directory on the mounted disk, the admin's as in a cluster: the driver refuses
    // to create one itself.
    Path pool = Files.createDirectories(live.resolve("pool"));
    try (LocalVolumeManager engine =
        LocalVolumeManager.open(CrashWorkload.engineConfig(pool, host.base, backend))) {
      Volume volume =
          engine.createVolume(
              new VolumeRequest(
                  "app",
                  256 * HostFixture.MIB,
                  0,
                  "",
                  AccessType.FILESYSTEM,
                  backend.fsTypes().iterator().next(),
                  ContentSource.EMPTY,
                  Map.of()));
      volumeId = volume.id();
      engine.stage(new StageRequest(volumeId, staging, AccessType.FILESYSTEM, "", List.of()));
      engine.publish(
          new PublishRequest(volumeId, staging, target, false, AccessType.FILESYSTEM, List.of()));
      try (AppendingWriter writer = new AppendingWriter(target.resolve("records"))) {
        Random random = new Random(2003);
        Thread.sleep(200);
        for (int i = 0; i < CUTS; i++) {
          Thread.sleep(100 + random.nextInt(300));
          long synced = writer.synced();
          cuts.add(new Cut(cutPower(i), synced, 0));
        }
      }
      engine.unpublish(volumeId, target);
      engine.unstage(volumeId, staging);
    }
    for (int i = 0; i < cuts.size(); i++) {
      Cut cut = cuts.get(i);
      assertThat(cut.logBefore()).as("records synced before cut " + i).isGreaterThan(0);
      assertThat(recordsAfterPowerCut(backend, cut.image(), volumeId, i))
          .as("cut %d: records present in a row from the start", i)
          .isGreaterThanOrEqualTo(cut.logBefore());
      Files.delete(cut.image());
    }
  }

  /**
   * A volume staged at once after its create, as the kubelet does for a pod that waits for it, and
   * then a power cut: after the reboot the kubelet stages it again, which must work, with the
   * volume's capacity. The staging's record is durable when it is answered; recovery makes a lost
   * blank volume again only when it was never staged, so staging must leave the volume itself on
   * the disk too (a btrfs subvolume create otherwise waits for the filesystem's next commit).
   */
  @ParameterizedTest(name = "{0}")
  @EnumSource(PoolConfig.Backend.class)
  void aVolumeStagedJustBeforeAPowerCutStagesAgainAfterIt(PoolConfig.Backend backend)
      throws Exception {
    Path live = mountLiveDisk(backend);
    Path pool = Files.createDirectories(live.resolve("pool"));
    long capacity = 256 * HostFixture.MIB;
    String volumeId;
    Path cut;
    try (LocalVolumeManager engine =
        LocalVolumeManager.open(CrashWorkload.engineConfig(pool, host.base, backend))) {
      VolumeRequest request =
          new VolumeRequest(
              "staged",
              capacity,
              0,
              "",
              AccessType.FILESYSTEM,
              backend.fsTypes().iterator().next(),
              ContentSource.EMPTY,
              Map.of());
      volumeId = engine.createVolume(request).id();
      Path staging = host.base.resolve("staging");
      engine.stage(new StageRequest(volumeId, staging, AccessType.FILESYSTEM, "", List.of()));
      cut = cutPower(0);
      engine.unstage(volumeId, staging);
    }
    Path mountPoint = host.base.resolve("cut-0");
    String device = bootClone(backend, cut, mountPoint);
    Path rebooted = mountPoint.resolve("pool");
    try (LocalVolumeManager engine =
        LocalVolumeManager.open(CrashWorkload.engineConfig(rebooted, host.base, backend))) {
      Path staging = host.base.resolve("staging-after-cut");
      engine.stage(new StageRequest(volumeId, staging, AccessType.FILESYSTEM, "", List.of()));
      assertThat(engine.findVolume(volumeId).orElseThrow().condition().abnormal())
          .as("the volume is healthy once staged again")
          .isFalse();
      long offered = engine.usage(volumeId, staging).totalBytes();
      switch (backend) {
        // ext4 keeps part of its image for itself
        case IMAGE_FILE -> assertThat(offered).isPositive().isLessThanOrEqualTo(capacity);
        // the qgroup limit
        case BTRFS_SUBVOLUME -> assertThat(offered).isEqualTo(capacity);
      }
      engine.unstage(volumeId, staging);
    }
    host.sh("umount", mountPoint.toString());
    new Losetup().detach(device);
    Files.delete(cut);
  }

  /**
   * The pool's own disk, an image on the fixture's reflink-capable XFS so that it can be cloned.
   */
  private Path disk() {
    return host.xfsPool.getParent().resolve("disk.img");
  }

  /** Makes and mounts the disk; returns where it is mounted. */
  private Path mountLiveDisk() throws IOException {
    return host.mountNewXfs(disk(), 1024 * HostFixture.MIB, host.base.resolve("live"));
  }

  /** Makes and mounts a disk with the filesystem a pool of {@code backend} needs. */
  private Path mountLiveDisk(PoolConfig.Backend backend) throws IOException {
    return switch (backend) {
      case IMAGE_FILE -> mountLiveDisk();
      case BTRFS_SUBVOLUME -> {
        Path mountPoint = Files.createDirectories(host.base.resolve("live"));
        try (RandomAccessFile file = new RandomAccessFile(disk().toFile(), "rw")) {
          file.setLength(1024 * HostFixture.MIB);
        }
        host.sh("mkfs.btrfs", "-q", disk().toString());
        host.sh("mount", "-t", "btrfs", new Losetup().attach(disk()), mountPoint.toString());
        host.sh("btrfs", "quota", "enable", mountPoint.toString());
        yield mountPoint;
      }
    };
  }

  /** Cut number {@code i}: a clone of the disk as it is now; returns the clone's image. */
  private Path cutPower(int i) {
    Path image = disk().resolveSibling("cut-" + i + ".img");
    host.sh("cp", "--reflink=always", disk().toString(), image.toString());
    return image;
  }

  /**
   * Mounts a clone of a pool disk made by {@link #mountLiveDisk(PoolConfig.Backend)} at {@code
   * mountPoint}, as after a reboot (XFS replays its log, btrfs its log tree); returns its loop
   * device.
   */
  private String bootClone(PoolConfig.Backend backend, Path image, Path mountPoint)
      throws IOException {
    Files.createDirectories(mountPoint);
    String device = new Losetup().attach(image);
    String at = mountPoint.toString();
    // A switch expression, so that a new backend cannot compile without saying how it boots.
    String[] mount =
        switch (backend) {
          // nouuid: the clone has the live filesystem's UUID, and that one is still mounted.
          case IMAGE_FILE -> new String[] {"mount", "-t", "xfs", "-o", "nouuid", device, at};
          // The kernel gives a single-device clone of a mounted btrfs a temporary fsid itself.
          case BTRFS_SUBVOLUME -> new String[] {"mount", "-t", "btrfs", device, at};
        };
    host.sh(mount);
    return device;
  }

  /**
   * Boots a clone of the pool's disk as after a power cut (the pool's filesystem and an image
   * volume's ext4 replay their logs) and counts the intact records at the start of the
   * application's file.
   */
  private long recordsAfterPowerCut(PoolConfig.Backend backend, Path disk, String volumeId, int i)
      throws Exception {
    Losetup loops = new Losetup();
    Path pool = host.base.resolve("cut-pool-" + i);
    String poolDevice = bootClone(backend, disk, pool);
    try {
      return switch (backend) {
        case IMAGE_FILE -> recordsInImage(pool.resolve("pool/images/" + volumeId + ".img"), i);
        // A subvolume is a directory of the pool's filesystem: nothing more to boot.
        case BTRFS_SUBVOLUME ->
            AppendingWriter.intactRecords(pool.resolve("pool/volumes/" + volumeId + "/records"));
      };
    } finally {
      host.sh("umount", pool.toString());
      loops.detach(poolDevice);
    }
  }

  /** Mounts an image volume's ext4 from a booted clone and counts the records in it. */
  private long recordsInImage(Path image, int i) throws Exception {
    Losetup loops = new Losetup();
    Path volume = Files.createDirectories(host.base.resolve("cut-volume-" + i));
    String volumeDevice = loops.attach(image);
    try {
      host.sh("mount", "-t", "ext4", volumeDevice, volume.toString());
      try {
        return AppendingWriter.intactRecords(volume.resolve("records"));
      } finally {
        host.sh("umount", volume.toString());
      }
    } finally {
      loops.detach(volumeDevice);
    }
  }

  private static Process startWorkload(Path pool, Path log, Path base, PoolConfig.Backend backend)
      throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    return new ProcessBuilder(
            java,
            "-cp",
            System.getProperty("java.class.path"),
            CrashWorkload.class.getName(),
            pool.toString(),
            log.toString(),
            "power",
            "77",
            backend.name())
        .redirectErrorStream(true)
        .redirectOutput(base.resolve("workload.log").toFile())
        .start();
  }
}
