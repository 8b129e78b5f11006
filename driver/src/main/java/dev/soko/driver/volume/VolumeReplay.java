package dev.soko.driver.volume;

import dev.soko.driver.backend.Backends;
import dev.soko.driver.model.ContentSource;
import dev.soko.driver.pool.Pool;
import dev.soko.driver.state.RecordStore;
import dev.soko.driver.state.VolumeRecord;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link Recovery}'s replay of a pool's volume records: an unfinished create or delete is settled,
 * a READY volume is loaded into the catalog and its storage checked, and what a power cut undid of
 * that storage while the record survived is put back (a blank volume's image, an uncommitted
 * change). A volume whose image is gone is kept and reported abnormal.
 */
final class VolumeReplay {
  // Recovery's logger for every step: the start-up repairs read, and filter, as one report.
  private static final Logger LOG = LoggerFactory.getLogger(Recovery.class);

  private final Catalog catalog;
  private final Backends backends;
  private final RecordReplay replay;

  VolumeReplay(Catalog catalog, Backends backends, RecordReplay replay) {
    this.catalog = catalog;
    this.backends = backends;
    this.replay = replay;
  }

  void load(Pool pool, RecoveryTally tally) {
    RecordStore records = pool.volumeRecords();
    for (String id : records.ids()) {
      VolumeRecord record = replay.read(records, id, VolumeRecord::fromFields, tally);
      if (record == null) {
        continue;
      }
      Path image = pool.volumeLocation(id);
      if (replay.settledUnfinished(pool, records, "volume", id, record.state(), image, tally)) {
        continue;
      }
      catalog.loadVolume(record);
      pool.adopt(id, record.capacityBytes());
      tally.keep.add(image);
      tally.liveVolumeLocations.add(image);
      if (remakeLostBlankImage(pool, record, image)) {
        tally.remade++;
        LOG.warn(
            "recovery: volume {} was created just before the crash and its empty image had not"
                + " reached the disk; made it again",
            id);
      }
      // Also after a remake that only raised a surviving subvolume's limit: its flags may be lost.
      if (!backends.of(pool).exists(image)) {
        tally.volumesMissing++;
        LOG.error(
            "recovery: volume {} ({}) has no image file; it is kept and reported abnormal",
            id,
            record.name());
      } else if (restoreUncommitted(pool, record, image)) {
        tally.restored++;
      }
    }
  }

  /**
   * A READY volume's storage may have lost, with a power cut, a change the pool filesystem had not
   * committed yet while its record survived (a btrfs qgroup limit: made at create, raised by an
   * expansion). Checked for every volume, not only blank ones: an expansion changes a volume that
   * holds data. A failure is logged, and the pool opens anyway.
   */
  private boolean restoreUncommitted(Pool pool, VolumeRecord record, Path image) {
    try {
      if (backends.of(pool).restoreUncommitted(pool, image, record.capacityBytes())) {
        LOG.warn(
            "recovery: volume {} had lost a change the pool filesystem had not committed (its"
                + " size limit or settings); put back for {} bytes",
            record.id(),
            record.capacityBytes());
        return true;
      }
    } catch (RuntimeException e) {
      LOG.error(
          "recovery: cannot check volume {} for changes a power cut lost: {}",
          record.id(),
          e.getMessage());
    }
    return false;
  }

  /**
   * A blank volume's image is not flushed when made (ImageFiles.createSparse), so a power loss soon
   * after the create may lose the file or its size while the create's journal entry survives. Such
   * a volume was never staged (staging flushes the image) and so never held data: it is made again.
   * Anything else that lacks its image is reported, never papered over.
   */
  private boolean remakeLostBlankImage(Pool pool, VolumeRecord record, Path image) {
    if (!record.source().equals(ContentSource.EMPTY)
        || !record.stagedAt().isEmpty()
        || !pool.volumeRecords().replayedFromJournal(record.id())) {
      return false;
    }
    if (!backends.of(pool).exists(image)) {
      backends.of(pool).create(pool, image, record.capacityBytes());
      // Flushed here: the pool opened with a checkpoint that already wrote this record's file, so
      // no later checkpoint flushes the image for it.
      Pool.fsync(image);
      return true;
    }
    if (backends.of(pool).size(pool, image) < record.capacityBytes()) {
      backends.of(pool).grow(pool, image, record.capacityBytes());
      return true;
    }
    return false;
  }
}
