package dev.soko.driver.volume;

import static dev.soko.driver.volume.HostFixture.MIB;
import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.driver.model.AccessType;
import dev.soko.driver.model.ContentSource;
import dev.soko.driver.model.Volume;
import dev.soko.driver.pool.ImageFiles;
import java.io.OutputStream;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Space goes back to the pool: data written in a volume allocates blocks of its image file, and a
 * discard in the volume (fstrim) punches them out again, through the (direct-I/O) loop device. Real
 * loop devices and mounts, on the XFS pool.
 */
class DiscardIT {
  private static final long WRITTEN = 128 * MIB;
  @RegisterExtension static final HostFixture host = new HostFixture();

  @Test
  void fstrimInAVolumeGivesTheDeletedDataBackToThePool() throws Exception {
    try (LocalVolumeManager engine = host.open()) {
      ImageFiles files = new ImageFiles(host.exec, false);
      List<Path> dirs = List.of(host.xfsPool.resolve("images"), host.xfsPool.resolve("snapshots"));
      for (String fsType : List.of("ext4", "xfs")) {
        Volume v =
            engine.createVolume(
                new VolumeRequest(
                    "trim-" + fsType,
                    512 * MIB,
                    0,
                    "xfs",
                    AccessType.FILESYSTEM,
                    fsType,
                    ContentSource.EMPTY,
                    Map.of()));
        Path staging = host.kubelet.resolve("staging/trim-" + fsType);
        engine.stage(new StageRequest(v.id(), staging, AccessType.FILESYSTEM, "", List.of()));
        long empty = files.allocatedBytes(dirs);

        Path data = staging.resolve("data");
        write(data, WRITTEN);
        long written = files.allocatedBytes(dirs);
        assertThat(written - empty)
            .as(fsType + ": writing allocates")
            .isGreaterThanOrEqualTo(WRITTEN);

        Files.delete(data);
        long trimmed = written;
        // XFS keeps freed extents busy until its log checkpoint is on disk, and FITRIM skips busy
        // extents: sync forces the log, and a trim that found them still busy is asked again.
        for (int attempt = 0; attempt < 10 && written - trimmed < WRITTEN * 9 / 10; attempt++) {
          host.sh("sync");
          System.out.println(fsType + ": " + host.sh("fstrim", "-v", staging.toString()).strip());
          trimmed = files.allocatedBytes(dirs);
          Thread.sleep(attempt * 200L);
        }
        assertThat(written - trimmed)
            .as(fsType + ": fstrim punches the deleted data out of the image")
            .isGreaterThan(WRITTEN * 9 / 10);

        engine.unstage(v.id(), staging);
        engine.deleteVolume(v.id());
      }
    }
  }

  private static void write(Path file, long bytes) throws Exception {
    byte[] chunk = new byte[(int) MIB];
    Random random = new Random(11);
    try (OutputStream out = Files.newOutputStream(file)) {
      for (long done = 0; done < bytes; done += chunk.length) {
        random.nextBytes(chunk);
        out.write(chunk);
      }
    }
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
      channel.force(true);
    }
  }
}
