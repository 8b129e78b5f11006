package dev.soko.driver.extent;

import java.util.Optional;

/**
 * Block metadata from extent maps: the ranges of a file that hold data, and the ranges in which two
 * files differ. Two files differ where their bytes live in different places: a reflink copy shares
 * its source's blocks (the same device address) until one of them is written, when the written
 * block moves to a new address. A byte in a hole of both is the same (zero). Where the filesystem
 * cannot share blocks (ext4: copies are sparse copies), every byte that holds data in either file
 * lives at two addresses, so the answer is every allocated range of both: a superset of the change,
 * never less.
 */
public final class Ranges {
  private Ranges() {}

  /** The ranges of {@code extents} that hold data, from {@code from} up to {@code end}. */
  public static RangeCursor allocated(ExtentSource extents, long from, long end) {
    DataMap map = new DataMap(extents);
    return new MergingCursor() {
      private long position = from;

      @Override
      Optional<ByteRange> nextPiece() {
        while (position < end) {
          long boundary = Math.min(map.boundaryAfter(position), end);
          boolean data = map.addressOf(position) != DataMap.HOLE;
          long start = position;
          position = boundary;
          if (data) {
            return Optional.of(new ByteRange(start, boundary - start));
          }
        }
        return Optional.empty();
      }

      @Override
      public void close() {
        extents.close();
      }
    };
  }

  /**
   * The ranges from {@code from} up to {@code end} in which {@code target} may hold other bytes
   * than {@code base}; both files on one filesystem.
   */
  public static RangeCursor changed(ExtentSource base, ExtentSource target, long from, long end) {
    DataMap before = new DataMap(base);
    DataMap after = new DataMap(target);
    return new MergingCursor() {
      private long position = from;

      @Override
      Optional<ByteRange> nextPiece() {
        while (position < end) {
          long boundary =
              Math.min(
                  Math.min(before.boundaryAfter(position), after.boundaryAfter(position)), end);
          boolean differs = differ(before.addressOf(position), after.addressOf(position));
          long start = position;
          position = boundary;
          if (differs) {
            return Optional.of(new ByteRange(start, boundary - start));
          }
        }
        return Optional.empty();
      }

      @Override
      public void close() {
        try {
          base.close();
        } finally {
          target.close();
        }
      }
    };
  }

  private static boolean differ(long before, long after) {
    return before != after || before == DataMap.UNKNOWN;
  }
}
