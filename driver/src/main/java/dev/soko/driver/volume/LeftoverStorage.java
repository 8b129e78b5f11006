package dev.soko.driver.volume;

import dev.soko.driver.backend.Backends;
import dev.soko.driver.pool.Pool;
import dev.soko.driver.state.Ids;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link Recovery}'s sweep of a pool's storage after its records are replayed: what no record
 * names, a create or another node's read cut short, is removed; what is not Soko's is left alone.
 */
final class LeftoverStorage {
  // Recovery's logger for every step: the start-up repairs read, and filter, as one report.
  private static final Logger LOG = LoggerFactory.getLogger(Recovery.class);

  private final Backends backends;

  LeftoverStorage(Backends backends) {
    this.backends = backends;
  }

  /**
   * Removes the temporary copies that reads by other nodes left when the driver stopped or crashed
   * mid-stream: no record ever names one, and the read that needed it ended with the process.
   */
  int removeReadCopies(Pool pool) {
    int removed = 0;
    for (Path file : backends.of(pool).stored(pool)) {
      if (backends.of(pool).idOf(file).filter(Ids::isReadCopyId).isPresent()) {
        remove(pool, file);
        removed++;
        LOG.warn("recovery: {} was a copy for another node's read, cut by a stop; removed", file);
      }
    }
    return removed;
  }

  /** Removes every Soko image of the pool not in {@code keep}, the images of READY records. */
  int removeOrphanImages(Pool pool, Set<Path> keep) {
    int removed = 0;
    for (Path file : backends.of(pool).stored(pool)) {
      if (backends.of(pool).idOf(file).isEmpty()) {
        LOG.warn("recovery: {} is not a Soko image; left alone", file);
        continue;
      }
      if (!keep.contains(file)) {
        remove(pool, file);
        removed++;
        LOG.warn("recovery: image {} had no record (a create interrupted); removed", file);
      }
    }
    return removed;
  }

  /** Removes one storage location of the pool; recovery cannot go on past a failure here. */
  void remove(Pool pool, Path file) {
    try {
      backends.of(pool).delete(file);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot remove " + file, e);
    }
  }
}
