package dev.soko.driver.pool;

import dev.soko.driver.model.AccessType;

/** How a requested capacity range becomes an image size. */
public final class Sizes {
  /** Images are sized in whole MiB: aligned for loop devices and every filesystem's block size. */
  public static final long MIB = 1L << 20;

  public static final long GIB = 1L << 30;

  /** The size of a volume whose request names no capacity. */
  public static final long DEFAULT_BYTES = GIB;

  /** mkfs.xfs (xfsprogs 6.x) refuses filesystems smaller than 300 MiB. */
  public static final long XFS_MINIMUM = 300 * MIB;

  /** Below this ext4 has no room for a journal worth having. */
  public static final long EXT4_MINIMUM = 16 * MIB;

  /** A btrfs subvolume is a limit, not a filesystem: any whole MiB will do. */
  public static final long BTRFS_MINIMUM = MIB;

  /** An upper bound far beyond any pool, so size arithmetic can never overflow. */
  public static final long MAXIMUM = 1L << 50;

  private Sizes() {}

  public static long minimumFor(AccessType accessType, String fsType) {
    if (accessType == AccessType.BLOCK) {
      return MIB;
    }
    return switch (fsType) {
      case "xfs" -> XFS_MINIMUM;
      case "btrfs" -> BTRFS_MINIMUM;
      default -> EXT4_MINIMUM;
    };
  }

  /**
   * Picks the image size for a capacity range: the required bytes (or the default when none are
   * given), raised to {@code minimum} and rounded up to whole MiB, but never above {@code limit}.
   *
   * @param required the minimum the caller needs, 0 for "no preference"
   * @param limit the maximum the caller accepts, 0 for "no limit"
   * @throws PoolException BAD_INPUT for negative values, SIZE_OUT_OF_RANGE when no size in the
   *     range satisfies the minimum and the rounding
   */
  public static long resolve(long required, long limit, long minimum) {
    if (required < 0 || limit < 0) {
      throw PoolException.of(PoolException.Kind.BAD_INPUT, "capacity range must not be negative");
    }
    if (limit > 0 && required > limit) {
      throw PoolException.of(
          PoolException.Kind.SIZE_OUT_OF_RANGE,
          "required bytes %d exceed the limit of %d bytes",
          required,
          limit);
    }
    if (required > MAXIMUM) {
      throw PoolException.of(
          PoolException.Kind.SIZE_OUT_OF_RANGE,
          "required bytes %d exceed the largest supported volume (%d bytes)",
          required,
          MAXIMUM);
    }
    long wanted = required > 0 ? required : DEFAULT_BYTES;
    if (required == 0 && limit > 0) {
      wanted = Math.min(wanted, limit);
    }
    long size = roundUp(Math.max(wanted, minimum));
    if (limit > 0 && size > limit) {
      size = limit / MIB * MIB;
      if (size < Math.max(required, minimum)) {
        throw PoolException.of(
            PoolException.Kind.SIZE_OUT_OF_RANGE,
            "no size in [%d, %d] bytes fits: volumes of this type need at least %d bytes in whole"
                + " MiB",
            required,
            limit,
            minimum);
      }
    }
    return size;
  }

  public static long roundUp(long bytes) {
    return (bytes + MIB - 1) / MIB * MIB;
  }
}
