package dev.soko.driver.backend;

import dev.soko.driver.extent.RangeCursor;
import java.nio.file.Path;

/**
 * Block metadata of a backend whose storage is the image of a block device: which ranges of a
 * snapshot hold data, and which ranges differ between two snapshots of one volume. What changed
 * block tracking (the CSI SnapshotMetadata service) serves. The ranges are byte ranges of the
 * device; a cursor over a large storage holds one batch at a time.
 */
public interface BlockMaps {
  /** The ranges of {@code location} that hold data, from {@code from} up to {@code end}. */
  RangeCursor allocated(Path location, long from, long end);

  /**
   * The ranges from {@code from} up to {@code end} in which {@code target} may hold other bytes
   * than {@code base}: exactly the changed blocks where the pool shares blocks between copies, a
   * superset (every allocated range of either) where it cannot.
   */
  RangeCursor changed(Path base, Path target, long from, long end);
}
