package dev.soko.driver.pool;

import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The physical truth of a pool's filesystem, as statfs(2) reports it at the moment of asking: its
 * size, the bytes used (by anyone, not only this pool's images) and the bytes an unprivileged
 * writer can still get. Sparse images promise more than the disk holds, so this, not the sum of
 * reservations, says whether a pool is full.
 *
 * @param sizeBytes f_blocks × f_frsize
 * @param usedBytes (f_blocks − f_bfree) × f_frsize
 * @param availableBytes f_bavail × f_frsize: what is left before writes fail with ENOSPC
 */
public record PoolUsage(long sizeBytes, long usedBytes, long availableBytes) {

  /** Reads a pool's filesystem; a seam so tests can fill a pool without writing gigabytes. */
  @FunctionalInterface
  public interface Reader {
    PoolUsage read() throws IOException;
  }

  /**
   * A reader for the filesystem holding {@code root}. The JDK's {@link FileStore} issues a fresh
   * statvfs(3) on every call (it caches only the mount entry), so no JNA binding is needed here.
   */
  public static Reader of(Path root) throws IOException {
    FileStore store = Files.getFileStore(root);
    return () -> {
      long size = store.getTotalSpace();
      return new PoolUsage(size, size - store.getUnallocatedSpace(), store.getUsableSpace());
    };
  }
}
