package dev.soko.driver.extent;

import java.util.Optional;

/** A file's extents in increasing logical order, read as they are asked for. */
public interface ExtentSource extends AutoCloseable {
  /** The next extent, or empty after the last. */
  Optional<Extent> next();

  @Override
  void close();
}
