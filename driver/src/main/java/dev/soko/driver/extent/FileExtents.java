package dev.soko.driver.extent;

import dev.soko.driver.sys.Syscalls;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Optional;

/**
 * A file's extent map through the FIEMAP ioctl, read in batches of {@link #BATCH} extents so that
 * the map of a file of any size costs the same memory. The file is opened read-only and synced once
 * by the first call (FIEMAP's sync flag), so delayed writes show at their final place; nothing of
 * the file changes.
 */
public final class FileExtents implements ExtentSource {
  /** _IOWR('f', 11, struct fiemap), with struct fiemap of 32 bytes. */
  static final long FS_IOC_FIEMAP = 0xC020660BL;

  static final int HEADER_BYTES = 32;
  static final int EXTENT_BYTES = 56;
  static final int BATCH = 512;
  private static final int FIEMAP_FLAG_SYNC = 0x1;
  private static final int O_RDONLY = 0;

  private final Syscalls syscalls;
  private final int fd;
  private final long end;
  private final ArrayDeque<Extent> batch = new ArrayDeque<>();
  private long next;
  private boolean synced;
  private boolean exhausted;

  private FileExtents(Syscalls syscalls, int fd, long from, long end) {
    this.syscalls = syscalls;
    this.fd = fd;
    this.next = from;
    this.end = end;
  }

  /** The extents of {@code file} that hold any of its bytes from {@code from} up to {@code end}. */
  public static FileExtents open(Syscalls syscalls, Path file, long from, long end) {
    int fd = syscalls.open(file.toString(), O_RDONLY);
    return new FileExtents(syscalls, fd, from, end);
  }

  @Override
  public Optional<Extent> next() {
    if (batch.isEmpty() && !exhausted) {
      readBatch();
    }
    return Optional.ofNullable(batch.poll());
  }

  private void readBatch() {
    if (next >= end) {
      exhausted = true;
      return;
    }
    byte[] struct = new byte[HEADER_BYTES + BATCH * EXTENT_BYTES];
    ByteBuffer header = ByteBuffer.wrap(struct).order(ByteOrder.nativeOrder());
    header.putLong(0, next);
    header.putLong(8, end - next);
    header.putInt(16, synced ? 0 : FIEMAP_FLAG_SYNC);
    header.putInt(24, BATCH);
    syscalls.ioctl(fd, FS_IOC_FIEMAP, struct);
    synced = true;
    int mapped = header.getInt(20);
    for (int i = 0; i < mapped; i++) {
      batch.add(decode(header, HEADER_BYTES + i * EXTENT_BYTES));
    }
    Extent last = batch.peekLast();
    if (last == null || last.last() || last.end() >= end) {
      exhausted = true;
    } else {
      next = last.end();
    }
  }

  static Extent decode(ByteBuffer buffer, int at) {
    return new Extent(
        buffer.getLong(at),
        buffer.getLong(at + 8),
        buffer.getLong(at + 16),
        buffer.getInt(at + 40));
  }

  @Override
  public void close() {
    syscalls.close(fd);
  }
}
