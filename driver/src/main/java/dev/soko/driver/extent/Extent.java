package dev.soko.driver.extent;

/**
 * One extent of a file as FIEMAP reports it: {@code length} bytes of the file from {@code logical}
 * stored at {@code physical} on the filesystem's device.
 *
 * @param flags FIEMAP's {@code fe_flags}
 */
public record Extent(long logical, long physical, long length, int flags) {
  /** The last extent of the file. */
  public static final int LAST = 0x1;

  /** The data's location is not known (yet): its physical offset means nothing. */
  public static final int UNKNOWN = 0x2;

  /** Delayed allocation: not on the device yet (FIEMAP's sync flag leaves none). */
  public static final int DELALLOC = 0x4;

  /** The data is encoded (compressed): its physical offset is not a plain block address. */
  public static final int ENCODED = 0x8;

  /** Packed with other files' data, or inline in metadata: not a block of the file's own. */
  public static final int NOT_ALIGNED = 0x100;

  public static final int DATA_INLINE = 0x200;

  /** Allocated but never written: it reads as zeros, like a hole. */
  public static final int UNWRITTEN = 0x800;

  /** Shared with another file (a reflink copy). */
  public static final int SHARED = 0x2000;

  private static final int LOCATION_UNKNOWN =
      UNKNOWN | DELALLOC | ENCODED | NOT_ALIGNED | DATA_INLINE;

  public long end() {
    return logical + length;
  }

  public boolean last() {
    return (flags & LAST) != 0;
  }

  /** Reads back what was written: a never-written (unwritten) extent reads as zeros. */
  public boolean holdsData() {
    return (flags & UNWRITTEN) == 0;
  }

  /**
   * Whether its physical offset identifies its blocks, so that two files mapping a byte to the same
   * physical offset hold the same block. Compressed, inline or not yet placed data does not.
   */
  public boolean locatable() {
    return (flags & LOCATION_UNKNOWN) == 0;
  }
}
