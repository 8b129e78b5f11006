package dev.soko.driver.volume;

import dev.soko.driver.backend.Backends;
import dev.soko.driver.mount.Mounter;
import dev.soko.driver.pool.Pool;
import dev.soko.driver.state.VolumeRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link Recovery}'s report of the volumes recorded as staged whose loop device or staging mount is
 * gone (e.g. a reboot): counted and logged, not repaired.
 */
final class LostStagings {
  // Recovery's logger for every step: the start-up repairs read, and filter, as one report.
  private static final Logger LOG = LoggerFactory.getLogger(Recovery.class);

  private final Catalog catalog;
  private final Mounter mounter;
  private final Backends backends;
  private final Presentations presentations;

  LostStagings(Catalog catalog, Mounter mounter, Backends backends, Presentations presentations) {
    this.catalog = catalog;
    this.mounter = mounter;
    this.backends = backends;
    this.presentations = presentations;
  }

  /** Logs each such volume of {@code pool}; returns how many there are. */
  int report(Pool pool) {
    Health.View view = new Health(catalog, mounter, backends, presentations).view();
    int lost = 0;
    for (VolumeRecord record : catalog.volumes().values()) {
      if (record.pool().equals(pool.name())
          && !record.stagedAt().isEmpty()
          && backends.of(pool).exists(pool.volumeLocation(record.id()))
          && view.condition(pool, record, pool.volumeLocation(record.id())).abnormal()) {
        lost++;
        LOG.warn(
            "recovery: volume {} was staged at {} but {}",
            record.id(),
            record.stagedAt(),
            view.condition(pool, record, pool.volumeLocation(record.id())).message());
      }
    }
    return lost;
  }
}
