package dev.soko.driver.volume;

import dev.soko.driver.model.GroupSnapshot;
import dev.soko.driver.model.Snapshot;
import java.util.List;

/**
 * The snapshot calls, answered by the engine of the node that holds the volumes ({@link
 * VolumeManager}) or, in the controller-mode process, by handing each to that node ({@code
 * handoff.RemoteSnapshots}). Failures are {@link StorageException}s with the CSI code's reason.
 */
public interface SnapshotOperations {
  /** Creates a snapshot of a volume, or returns the existing one of that name and source. */
  Snapshot createSnapshot(String name, String sourceVolumeId);

  /** Deletes a snapshot. An unknown ID succeeds. */
  void deleteSnapshot(String snapshotId);

  /**
   * Snapshots several volumes of one pool of this node at one instant: their staged filesystems are
   * frozen together while they are copied. Returns the existing group of that name when it was
   * taken of the same volumes; the name with other volumes fails with ALREADY_EXISTS, volumes in
   * more than one pool with INVALID_ARGUMENT, a volume that is not on this node with NOT_FOUND (a
   * group's volumes must all be on one node).
   */
  GroupSnapshot createGroupSnapshot(String name, List<String> sourceVolumeIds);

  /**
   * A group snapshot; NOT_FOUND when there is none of that ID, INVALID_ARGUMENT when {@code
   * snapshotIds} is not empty and not the group's members.
   */
  GroupSnapshot getGroupSnapshot(String groupSnapshotId, List<String> snapshotIds);

  /**
   * Deletes a group snapshot and its members. An unknown ID succeeds; INVALID_ARGUMENT as for
   * {@link #getGroupSnapshot}.
   */
  void deleteGroupSnapshot(String groupSnapshotId, List<String> snapshotIds);
}
