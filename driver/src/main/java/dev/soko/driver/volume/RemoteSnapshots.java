package dev.soko.driver.volume;

import java.util.Optional;

/**
 * Snapshots and volumes held by other nodes, which a restore or clone on this node copies over the
 * node-to-node data path (docs/design.md, "Node to node"). The engine asks only for a snapshot or
 * volume its own catalog does not hold.
 */
public interface RemoteSnapshots {
  /** No other node is ever asked: a snapshot this node does not hold is not found. */
  RemoteSnapshots NONE = snapshotId -> Optional.empty();

  /**
   * The snapshot as the node that holds it describes it, or empty when no node is known to hold it.
   * Throws a {@link StorageException} that names the node when its node is known but cannot serve
   * it (UNAVAILABLE: the node is gone or its driver does not answer).
   */
  Optional<RemoteSnapshot> find(String snapshotId);

  /**
   * The volume as the node that holds it describes it (its copy is of that node's point-in-time
   * copy), or empty when no node is known to hold it; fails as {@link #find} does.
   */
  default Optional<RemoteSnapshot> findVolume(String volumeId) {
    return Optional.empty();
  }
}
