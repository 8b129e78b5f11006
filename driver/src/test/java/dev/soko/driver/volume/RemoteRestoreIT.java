package dev.soko.driver.volume;

import static dev.soko.driver.volume.HostFixture.MIB;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.soko.driver.config.DriverConfig;
import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.model.ContentSource;
import dev.soko.driver.model.Volume;
import dev.soko.driver.mount.Losetup;
import dev.soko.driver.mount.SystemMounter;
import dev.soko.driver.pool.NodeLabels;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A restore of another node's snapshot on real pools: into an XFS image-file pool it is the copy,
 * at the claim's size; a btrfs-subvolume pool (a real btrfs with quotas) refuses it before any byte
 * is copied or any space reserved, since its volumes are subvolumes and the copy is an image file.
 */
class RemoteRestoreIT {
  @RegisterExtension final HostFixture host = new HostFixture();

  static final String REMOTE = "snap-remoteremoteremotere";
  static final byte[] PAYLOAD = "written on node-2".getBytes(StandardCharsets.UTF_8);

  final FakeRemoteSnapshots remote = new FakeRemoteSnapshots();

  private Path btrfsPool() throws Exception {
    Path disk = host.base.resolve("btrfs.img");
    try (RandomAccessFile file = new RandomAccessFile(disk.toFile(), "rw")) {
      file.setLength(512 * MIB);
    }
    Path mountPoint = Files.createDirectories(host.base.resolve("btrfs"));
    host.sh("mkfs.btrfs", "-q", disk.toString());
    host.sh("mount", "-t", "btrfs", new Losetup().attach(disk), mountPoint.toString());
    host.sh("btrfs", "quota", "enable", mountPoint.toString());
    return Files.createDirectories(mountPoint.resolve("pool"));
  }

  private LocalVolumeManager open(Path btrfs) {
    PoolConfig xfs =
        new PoolConfig(
            "xfs", host.xfsPool, 1024 * MIB, 1.0, new LinkedHashSet<>(List.of("ext4", "xfs")));
    PoolConfig subvolumes =
        new PoolConfig(
            "subvolumes",
            btrfs,
            256 * MIB,
            1.0,
            new LinkedHashSet<>(List.of("btrfs")),
            false,
            false,
            Map.of(),
            PoolConfig.Backend.BTRFS_SUBVOLUME);
    DriverConfig config =
        DriverConfig.node(
            "csi.soko.dev",
            "node-it",
            "unix:///tmp/unused.sock",
            List.of(xfs, subvolumes),
            List.of(host.kubelet),
            64);
    return new LocalVolumeManager(
        config,
        host.exec,
        new SystemMounter(host.exec),
        new Losetup(),
        NodeLabels.unknownBecause("not read in this test"),
        remote);
  }

  private static VolumeRequest restore(String name, String pool, String fs) {
    return new VolumeRequest(
        name,
        32 * MIB,
        0,
        pool,
        AccessType.FILESYSTEM,
        fs,
        new ContentSource.FromSnapshot(REMOTE),
        Map.of());
  }

  @Test
  void anImageFilePoolTakesTheCopyAndABtrfsSubvolumePoolRefusesIt() throws Exception {
    Path btrfs = btrfsPool();
    try (LocalVolumeManager engine = open(btrfs)) {
      remote.hold(REMOTE, "node-2", 16 * MIB, AccessType.FILESYSTEM, "btrfs", PAYLOAD);
      StorageException refused =
          catchThrowableOfType(
              StorageException.class,
              () -> engine.createVolume(restore("into-subvolumes", "subvolumes", "btrfs")));
      assertThat(refused.reason()).isEqualTo(StorageException.Reason.INVALID_ARGUMENT);
      assertThat(refused.getMessage())
          .contains("the snapshot " + REMOTE + " is on node node-2")
          .contains("pool subvolumes (backend btrfs-subvolume)")
          .contains("restore it on node node-2");
      assertThat(remote.copiedTo).as("nothing copied").isEmpty();
      try (Stream<Path> volumes = Files.list(btrfs.resolve("volumes"))) {
        assertThat(volumes).as("no subvolume made").isEmpty();
      }
      assertThat(engine.capacity())
          .filteredOn(c -> c.pool().equals("subvolumes"))
          .singleElement()
          .satisfies(c -> assertThat(c.availableBytes()).isEqualTo(256 * MIB));

      remote.hold(REMOTE, "node-2", 16 * MIB, AccessType.FILESYSTEM, "ext4", PAYLOAD);
      Volume volume = engine.createVolume(restore("into-images", "xfs", "ext4"));
      Path image = host.xfsPool.resolve("images/" + volume.id() + ".img");
      assertThat(volume.capacityBytes()).isEqualTo(32 * MIB);
      assertThat(Files.size(image)).isEqualTo(32 * MIB);
      assertThat(FakeRemoteSnapshots.head(image, PAYLOAD.length)).isEqualTo(PAYLOAD);
      engine.deleteVolume(volume.id());
    }
  }
}
