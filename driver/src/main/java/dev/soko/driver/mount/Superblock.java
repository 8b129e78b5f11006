package dev.soko.driver.mount;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;

/**
 * Reads the two filesystems the driver makes straight from a device's first bytes, so restaging a
 * volume needs no blkid or dumpe2fs process: a stage/unstage cycle is dominated by process spawns.
 * Only what the driver itself writes is recognised; anything else is left to blkid.
 */
final class Superblock {
  /** How much is read: enough for the ext4 superblock, and zero means "nothing recognisable". */
  static final int HEAD_BYTES = 64 * 1024;

  private static final int EXT4_SUPERBLOCK = 1024;
  private static final int EXT4_MAGIC = 0xEF53;
  private static final int EXT4_FEATURE_INCOMPAT_64BIT = 0x80;
  private static final byte[] XFS_MAGIC = {'X', 'F', 'S', 'B'};
  // struct xfs_dsb (big-endian): sb_sectsize and sb_logsectsize (0 on old filesystems: 512).
  private static final int XFS_SECTOR_SIZE = 102;
  private static final int XFS_LOG_SECTOR_SIZE = 194;
  private static final int XFS_DEFAULT_LOG_SECTOR = 512;

  /** What the first bytes say. */
  enum Kind {
    EXT4,
    XFS,
    /** All zeros: blank as far as these bytes go (other signatures may still sit further in). */
    ZEROS,
    /** Something else: never format it. */
    OTHER
  }

  private final ByteBuffer head;

  private Superblock(ByteBuffer head) {
    this.head = head.order(ByteOrder.LITTLE_ENDIAN);
  }

  static Superblock read(Path device) throws IOException {
    ByteBuffer head = ByteBuffer.allocate(HEAD_BYTES);
    try (FileChannel channel = FileChannel.open(device, StandardOpenOption.READ)) {
      while (head.hasRemaining() && channel.read(head) > 0) {
        // a device or file shorter than HEAD_BYTES leaves the rest zero
      }
    }
    head.clear();
    return new Superblock(head);
  }

  static Superblock of(byte[] bytes) {
    return new Superblock(ByteBuffer.wrap(java.util.Arrays.copyOf(bytes, HEAD_BYTES)));
  }

  Kind kind() {
    if (head.get(0) == XFS_MAGIC[0]
        && head.get(1) == XFS_MAGIC[1]
        && head.get(2) == XFS_MAGIC[2]
        && head.get(3) == XFS_MAGIC[3]) {
      return Kind.XFS;
    }
    if ((head.getShort(EXT4_SUPERBLOCK + 0x38) & 0xFFFF) == EXT4_MAGIC) {
      return Kind.EXT4;
    }
    for (int i = 0; i < HEAD_BYTES; i += Long.BYTES) {
      if (head.getLong(i) != 0) {
        return Kind.OTHER;
      }
    }
    return Kind.ZEROS;
  }

  /**
   * The smallest unit the filesystem reads and writes its device in: a device whose logical blocks
   * are larger no longer mounts it. ext4: its block size (1 KiB for ext4 under 512 MiB made with
   * mke2fs's defaults); xfs: the smaller of its data and log sector sizes (512 on filesystems made
   * on 512-byte devices). Empty when the head holds neither.
   */
  Optional<Integer> smallestIo() {
    return switch (kind()) {
      case EXT4 -> Optional.of(1024 << head.getInt(EXT4_SUPERBLOCK + 0x18));
      case XFS -> {
        ByteBuffer xfs = head.duplicate().order(ByteOrder.BIG_ENDIAN);
        int sector = xfs.getShort(XFS_SECTOR_SIZE) & 0xFFFF;
        int logSector = xfs.getShort(XFS_LOG_SECTOR_SIZE) & 0xFFFF;
        yield Optional.of(Math.min(sector, logSector == 0 ? XFS_DEFAULT_LOG_SECTOR : logSector));
      }
      default -> Optional.empty();
    };
  }

  /** The ext4 filesystem's size in bytes (block count times block size); empty if not ext4. */
  Optional<Long> ext4Bytes() {
    if (kind() != Kind.EXT4) {
      return Optional.empty();
    }
    long blocks = Integer.toUnsignedLong(head.getInt(EXT4_SUPERBLOCK + 0x04));
    int incompat = head.getInt(EXT4_SUPERBLOCK + 0x60);
    if ((incompat & EXT4_FEATURE_INCOMPAT_64BIT) != 0) {
      blocks |= Integer.toUnsignedLong(head.getInt(EXT4_SUPERBLOCK + 0x150)) << 32;
    }
    long blockSize = 1024L << head.getInt(EXT4_SUPERBLOCK + 0x18);
    return Optional.of(blocks * blockSize);
  }
}
