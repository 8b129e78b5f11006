package dev.soko.driver.volume;

import static dev.soko.driver.volume.HostFixture.MIB;
import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.driver.model.AccessType;
import dev.soko.driver.model.ContentSource;
import dev.soko.driver.model.Volume;
import dev.soko.driver.mount.Losetup;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Volumes' loop devices do direct I/O with the pool's block size (4 KiB on the XFS pool), and a
 * volume whose filesystem was made before that, on a 512-byte buffered device, still stages with
 * its data: its device gets the block size its superblock allows. Real loop devices and mounts.
 */
class DirectIoIT {
  @RegisterExtension static final HostFixture host = new HostFixture();

  private static Path staging(String name) {
    return host.kubelet.resolve("plugins/csi.soko.dev/staging/" + name);
  }

  private static Volume create(LocalVolumeManager engine, String name, String fsType) {
    return engine.createVolume(
        new VolumeRequest(
            name,
            320 * MIB,
            0,
            "xfs",
            AccessType.FILESYSTEM,
            fsType,
            ContentSource.EMPTY,
            Map.of()));
  }

  private static void stage(LocalVolumeManager engine, Volume v) {
    engine.stage(new StageRequest(v.id(), staging(v.name()), v.accessType(), "", List.of()));
  }

  /** "dio=D block=B" of the one loop device attached to the volume's image, from sysfs. */
  private static String device(Path image) throws Exception {
    List<String> devices = new Losetup().devicesFor(image);
    assertThat(devices).hasSize(1);
    Path sys = Path.of("/sys/block", Path.of(devices.get(0)).getFileName().toString());
    return "dio="
        + Files.readString(sys.resolve("loop/dio")).strip()
        + " block="
        + Files.readString(sys.resolve("queue/logical_block_size")).strip();
  }

  private static Path image(LocalVolumeManager engine, Volume v) {
    return host.xfsPool.resolve("images/" + v.id() + ".img");
  }

  @Test
  void newVolumesGetDirectIoWithThePoolsBlockSize() throws Exception {
    try (LocalVolumeManager engine = host.open()) {
      for (String fsType : List.of("ext4", "xfs")) {
        Volume v = create(engine, "new-" + fsType, fsType);
        stage(engine, v);
        assertThat(device(image(engine, v))).as(fsType).isEqualTo("dio=1 block=4096");
        Path file = staging(v.name()).resolve("data");
        Files.writeString(file, "written through a direct-I/O device");
        engine.unstage(v.id(), staging(v.name()));
        stage(engine, v);
        assertThat(Files.readString(file)).isEqualTo("written through a direct-I/O device");
        engine.unstage(v.id(), staging(v.name()));
        engine.deleteVolume(v.id());
      }
    }
  }

  @Test
  void aVolumeMadeBeforeDirectIoStagesWithTheBlockSizeItsSuperblockAllows() throws Exception {
    try (LocalVolumeManager engine = host.open()) {
      // What the driver made before: mkfs with the tools' defaults on a 512-byte buffered device,
      // i.e. ext4 with 1 KiB blocks (under 512 MiB) and xfs with 512-byte sectors.
      Map<String, String> expected = Map.of("ext4", "dio=1 block=1024", "xfs", "dio=1 block=512");
      for (String fsType : List.of("ext4", "xfs")) {
        Volume v = create(engine, "old-" + fsType, fsType);
        Path image = image(engine, v);
        Losetup loops = new Losetup();
        String old = loops.attach(image);
        host.sh("mkfs." + fsType, "-q", old);
        Path mounted = Files.createDirectories(host.base.resolve("old-" + fsType));
        host.sh("mount", old, mounted.toString());
        Files.writeString(mounted.resolve("data"), "written before direct I/O");
        host.sh("umount", mounted.toString());
        loops.detach(old);

        stage(engine, v);
        assertThat(device(image)).as(fsType).isEqualTo(expected.get(fsType));
        assertThat(Files.readString(staging(v.name()).resolve("data")))
            .isEqualTo("written before direct I/O");
        engine.unstage(v.id(), staging(v.name()));
        engine.deleteVolume(v.id());
      }
    }
  }
}
