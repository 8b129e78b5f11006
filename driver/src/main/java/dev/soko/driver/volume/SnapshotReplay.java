package dev.soko.driver.volume;

import dev.soko.driver.backend.Backends;
import dev.soko.driver.pool.Pool;
import dev.soko.driver.state.RecordState;
import dev.soko.driver.state.RecordStore;
import dev.soko.driver.state.SnapshotRecord;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link Recovery}'s replay of a pool's snapshot records, after the group snapshots': a snapshot
 * left unfinished, or a member of a group left unfinished whatever its own state, is settled; a
 * READY one is loaded into the catalog, and kept, reported, when its image is gone.
 */
final class SnapshotReplay {
  // Recovery's logger for every step: the start-up repairs read, and filter, as one report.
  private static final Logger LOG = LoggerFactory.getLogger(Recovery.class);

  private final Catalog catalog;
  private final Backends backends;
  private final RecordReplay replay;

  SnapshotReplay(Catalog catalog, Backends backends, RecordReplay replay) {
    this.catalog = catalog;
    this.backends = backends;
    this.replay = replay;
  }

  void load(Pool pool, RecoveryTally tally) {
    RecordStore records = pool.snapshotRecords();
    for (String id : records.ids()) {
      SnapshotRecord record = replay.read(records, id, SnapshotRecord::fromFields, tally);
      if (record == null) {
        continue;
      }
      Path image = pool.snapshotLocation(id);
      RecordState state = tally.unfinishedGroupMembers.getOrDefault(id, record.state());
      if (replay.settledUnfinished(pool, records, "snapshot", id, state, image, tally)) {
        continue;
      }
      catalog.loadSnapshot(record);
      pool.adopt(id, record.sizeBytes());
      tally.keep.add(image);
      if (!backends.of(pool).exists(image)) {
        tally.snapshotsMissing++;
        LOG.error(
            "recovery: snapshot {} ({}) has no image file; it is kept, and restoring from it fails",
            id,
            record.name());
      }
    }
  }
}
