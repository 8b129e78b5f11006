package dev.soko.driver.extent;

import java.util.Optional;

/**
 * Ranges in increasing order, none overlapping or touching the one before (adjacent ones are
 * merged), read as they are asked for: a cursor over a large file holds one batch of its extent
 * map, never the whole. Closing it releases the files it reads.
 */
public interface RangeCursor extends AutoCloseable {
  /** The next range, or empty at the end. */
  Optional<ByteRange> next();

  @Override
  void close();
}
