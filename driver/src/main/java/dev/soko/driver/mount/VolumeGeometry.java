package dev.soko.driver.mount;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The logical block size of a volume's direct-I/O loop device. It should match the pool
 * filesystem's block size: then every write the device passes down covers whole blocks of the image
 * file, which the pool filesystem takes without read-modify-write or serialising. But a filesystem
 * no longer mounts on a device whose blocks are larger than its own smallest unit, and volumes made
 * before direct I/O hold filesystems made on 512-byte devices (xfs sectors of 512, ext4 blocks of 1
 * KiB under 512 MiB). So each filesystem volume's limit is read from its superblock, never assumed;
 * new ones are made with {@link #NEW_FILESYSTEM_UNIT} and get the pool's size.
 */
public final class VolumeGeometry {
  /** What the driver makes filesystems with: ext4 blocks and xfs sectors of 4 KiB. */
  public static final int NEW_FILESYSTEM_UNIT = 4096;

  /**
   * Block volumes keep the 512-byte logical blocks they always had: what an application put on one
   * (a partition table, its own filesystem, O_DIRECT offsets) may rely on it, and nothing records
   * it. Direct I/O still applies where the pool's device allows 512-byte direct I/O.
   */
  public static final int BLOCK_VOLUME_SECTOR = 512;

  private static final int SMALLEST = 512;
  private static final int LARGEST = 4096; // the page size: the loop driver allows no more

  private VolumeGeometry() {}

  /** The pool filesystem's block size, within what a loop device allows (512 to 4096). */
  public static int poolBlockSize(Path poolDir) {
    try {
      long size = Files.getFileStore(poolDir).getBlockSize();
      int clamped = (int) Math.max(SMALLEST, Math.min(LARGEST, size));
      return Integer.highestOneBit(clamped);
    } catch (IOException | UnsupportedOperationException e) {
      return LARGEST;
    }
  }

  /**
   * The block size for a filesystem volume's image: the pool's, unless the filesystem already in
   * the image needs smaller blocks. A blank image (made next, with {@link #NEW_FILESYSTEM_UNIT})
   * gets the pool's; anything unrecognised gets 512, which every filesystem mounts on.
   */
  public static int forFilesystem(Path image, int poolBlockSize) {
    Superblock superblock;
    try {
      superblock = Superblock.read(image);
    } catch (IOException e) {
      throw MountException.failed("cannot read the superblock of " + image, e);
    }
    return switch (superblock.kind()) {
      case ZEROS -> Math.min(poolBlockSize, NEW_FILESYSTEM_UNIT);
      case EXT4, XFS ->
          Math.min(poolBlockSize, Math.max(SMALLEST, superblock.smallestIo().orElse(SMALLEST)));
      case OTHER -> SMALLEST;
    };
  }
}
