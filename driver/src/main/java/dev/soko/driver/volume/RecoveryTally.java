package dev.soko.driver.volume;

import dev.soko.driver.state.GroupSnapshotRecord;
import dev.soko.driver.state.RecordState;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What one run of {@link Recovery} has counted and learnt so far, passed from step to step: the
 * records' replay fills it, the storage and attached-device sweeps read it, and it becomes the
 * run's {@link Recovery.Report}.
 */
final class RecoveryTally {
  int corrupt;
  int rolledBack;
  int finished;
  int volumesMissing;
  int snapshotsMissing;
  int remade;
  int restored;
  int devicesInUse;

  /** The locations of READY records: every other one in the pool is an orphan. */
  final Set<Path> keep = new HashSet<>();

  /** The locations of READY volumes: a device backed by anything else is stale. */
  final Set<Path> liveVolumeLocations = new HashSet<>();

  /** Group snapshots a crash left CREATING or DELETING: removed once their members are. */
  final List<GroupSnapshotRecord> unfinishedGroups = new ArrayList<>();

  /** The members of those groups, with the group's state: they go whatever their own state. */
  final Map<String, RecordState> unfinishedGroupMembers = new HashMap<>();

  /** Counts a create a crash cut short as rolled back, a delete as finished. */
  void settled(RecordState unfinished) {
    if (unfinished == RecordState.CREATING) {
      rolledBack++;
    } else {
      finished++;
    }
  }
}
