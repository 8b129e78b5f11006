package dev.soko.driver.extent;

import java.util.Optional;

/**
 * Where each byte of a file lives, walked forward: in an extent that holds data, or in a hole
 * (never-written extents read as zeros, so they count as holes).
 */
final class DataMap {
  /** The address of a byte in a hole. */
  static final long HOLE = -1;

  /** The address of a byte whose block cannot be identified: it equals no other address. */
  static final long UNKNOWN = -2;

  private final ExtentSource extents;
  private Extent current;
  private boolean ended;

  DataMap(ExtentSource extents) {
    this.extents = extents;
  }

  /**
   * The extent that holds the byte at {@code position} or comes next after it, or null; extents
   * that end before it are dropped, so positions must not go backwards.
   */
  private Extent at(long position) {
    while (!ended && (current == null || current.end() <= position)) {
      Optional<Extent> read = extents.next();
      if (read.isEmpty()) {
        ended = true;
        current = null;
      } else if (read.get().holdsData()) {
        current = read.get();
      }
    }
    return current != null && current.end() > position ? current : null;
  }

  /** The first position after {@code position} at which what lives there may change. */
  long boundaryAfter(long position) {
    Extent extent = at(position);
    if (extent == null) {
      return Long.MAX_VALUE;
    }
    return extent.logical() <= position ? extent.end() : extent.logical();
  }

  /**
   * The device address of the byte at {@code position}, {@link #HOLE} or {@link #UNKNOWN}; for two
   * files of one filesystem, equal addresses mean the same block, shared.
   */
  long addressOf(long position) {
    Extent extent = at(position);
    if (extent == null || extent.logical() > position) {
      return HOLE;
    }
    return extent.locatable() ? extent.physical() + (position - extent.logical()) : UNKNOWN;
  }
}
