package dev.soko.driver.backend.btrfs;

import dev.soko.driver.backend.BackendUnderTest;
import dev.soko.driver.backend.PoolDirectories;
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
 * Pool directories on a real btrfs (a loop-mounted image) with quotas enabled, as in BtrfsPoolIT.
 * Needs root and btrfs-progs; fails without them.
 */
final class BtrfsScratch implements PoolDirectories {
  private static final long MIB = 1024 * 1024;
  private static final Exec EXEC = new ProcessExec();

  /** The btrfs-subvolume backend with its pools here, for its contract tests. */
  static final BackendUnderTest BACKEND =
      new BackendUnderTest(
          PoolConfig.Backend.BTRFS_SUBVOLUME,
          () -> new BtrfsSubvolumeBackend(new Btrfs(EXEC)),
          BtrfsScratch::new);

  private Path root;
  private Path btrfs;

  @Override
  public Path directory(String name) throws IOException {
    if (btrfs == null) {
      root = Files.createTempDirectory("soko-btrfs-scratch-");
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
  public void close() throws IOException {
    if (root == null) {
      return;
    }
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
