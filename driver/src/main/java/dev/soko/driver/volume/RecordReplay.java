package dev.soko.driver.volume;

import dev.soko.driver.pool.Pool;
import dev.soko.driver.state.RecordState;
import dev.soko.driver.state.RecordStore;
import java.nio.file.Path;
import java.util.Map;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The two repairs every kind of record shares when {@link Recovery} replays a pool's records: an
 * unreadable record is moved aside, and one a crash left CREATING or DELETING is settled.
 */
final class RecordReplay {
  // Recovery's logger for every step: the start-up repairs read, and filter, as one report.
  private static final Logger LOG = LoggerFactory.getLogger(Recovery.class);

  private final LeftoverStorage storage;

  RecordReplay(LeftoverStorage storage) {
    this.storage = storage;
  }

  /**
   * The record of {@code id}, or null when there is none or it is unreadable (then moved aside).
   */
  <T> T read(
      RecordStore store, String id, Function<Map<String, String>, T> parse, RecoveryTally tally) {
    try {
      return store.read(id).map(parse).orElse(null);
    } catch (RuntimeException e) {
      Path aside = store.quarantine(id);
      tally.corrupt++;
      LOG.error("recovery: record {} is unreadable ({}); moved to {}", id, e.getMessage(), aside);
      return null;
    }
  }

  /**
   * A record that a crash left CREATING or DELETING: its image and then the record go, which rolls
   * the create back (the client was never told it succeeded) or finishes the delete. True when the
   * record was such a one.
   */
  boolean settledUnfinished(
      Pool pool,
      RecordStore records,
      String what,
      String id,
      RecordState state,
      Path image,
      RecoveryTally tally) {
    if (state == RecordState.READY) {
      return false;
    }
    storage.remove(pool, image);
    records.delete(id);
    tally.settled(state);
    LOG.warn("recovery: {} {} was {} at the crash; removed", what, id, state);
    return true;
  }
}
