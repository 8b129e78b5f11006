package dev.soko.driver.backend.btrfs;

import dev.soko.driver.backend.VolumeBackend;
import dev.soko.driver.backend.VolumeStorageContract;
import dev.soko.driver.btrfs.Btrfs;
import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.exec.Exec;
import dev.soko.driver.exec.ProcessExec;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * The storage contract for btrfs subvolumes, on a real btrfs (a loop-mounted image) with quotas
 * enabled; each pool is a directory on it, as in BtrfsPoolIT. Needs root and btrfs-progs; fails
 * without them.
 */
class BtrfsStorageContractIT extends VolumeStorageContract {
  private static final long MIB = 1024 * 1024;
  private static final Exec EXEC = new ProcessExec();

  private Path root;
  private Path btrfs;

  @Override
  protected PoolConfig.Backend kind() {
    return PoolConfig.Backend.BTRFS_SUBVOLUME;
  }

  @Override
  protected VolumeBackend backend() {
    return new BtrfsSubvolumeBackend(new Btrfs(EXEC));
  }

  @Override
  protected Path poolDirectory(String name) throws IOException {
    if (btrfs == null) {
      root = Files.createTempDirectory("soko-btrfs-storage-");
      Path image = root.resolve("btrfs.img");
      try (var file = new RandomAccessFile(image.toFile(), "rw")) {
        file.setLength(512 * MIB);
      }
      run("mkfs.btrfs", "-q", image.toString());
      btrfs = Files.createDirectories(root.resolve("mnt"));
      run("mount", "-o", "loop", image.toString(), btrfs.toString());
      run("btrfs", "quota", "enable", btrfs.toString());
    }
    return Files.createDirectories(btrfs.resolve(name));
  }

  @Override
  protected void release() throws IOException {
    if (btrfs != null) {
      // Unmounting the loop-mounted image detaches its loop device (autoclear).
      run("umount", btrfs.toString());
    }
    try (Stream<Path> paths = Files.walk(root)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }

  private static void run(String... command) {
    EXEC.check(List.of(command), Exec.LONG);
  }
}
