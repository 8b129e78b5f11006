package dev.soko.driver.volume;

import dev.soko.driver.pool.Pool;
import dev.soko.driver.state.GroupSnapshotRecord;
import dev.soko.driver.state.RecordState;
import dev.soko.driver.state.RecordStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link Recovery}'s replay of a pool's group snapshot records, in two steps around the snapshots':
 * the complete groups are indexed and the unfinished ones noted, so that {@link SnapshotReplay}
 * removes their members; then the unfinished groups' records go, the last step of each.
 */
final class GroupSnapshotReplay {
  // Recovery's logger for every step: the start-up repairs read, and filter, as one report.
  private static final Logger LOG = LoggerFactory.getLogger(Recovery.class);

  private final Catalog catalog;
  private final RecordReplay replay;

  GroupSnapshotReplay(Catalog catalog, RecordReplay replay) {
    this.catalog = catalog;
    this.replay = replay;
  }

  /**
   * Indexes the complete group snapshots and notes the ones a crash left CREATING (the client was
   * never told of them, and retries by name) or DELETING, whose members then go in {@link
   * SnapshotReplay#load}, ready or not.
   */
  void load(Pool pool, RecoveryTally tally) {
    RecordStore records = pool.groupRecords();
    for (String id : records.ids()) {
      GroupSnapshotRecord record = replay.read(records, id, GroupSnapshotRecord::fromFields, tally);
      if (record == null) {
        continue;
      }
      if (record.state() == RecordState.READY) {
        catalog.loadGroup(record);
        continue;
      }
      tally.unfinishedGroups.add(record);
      record
          .snapshotIds()
          .forEach(member -> tally.unfinishedGroupMembers.put(member, record.state()));
    }
  }

  /** The records of unfinished groups, once their members are gone: the last step of each. */
  void removeUnfinished(Pool pool, RecoveryTally tally) {
    for (GroupSnapshotRecord group : tally.unfinishedGroups) {
      pool.groupRecords().delete(group.id());
      tally.settled(group.state());
      LOG.warn(
          "recovery: group snapshot {} ({} snapshots) was {} at the crash; removed",
          group.id(),
          group.snapshotIds().size(),
          group.state());
    }
  }
}
