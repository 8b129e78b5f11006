package dev.soko.driver.volume;

/**
 * The snapshots this node holds as images, for the node-to-node data path (docs/design.md, "Node to
 * node"): another node reads a snapshot's allocated ranges from its image. Failures are {@link
 * StorageException}s with the CSI code's reason.
 */
public interface SnapshotImages {
  /**
   * The ready snapshot's image: NOT_FOUND when this node holds no ready snapshot of that ID,
   * FAILED_PRECONDITION, naming the pool, when its pool stores no block device images.
   */
  SnapshotImage snapshotImage(String snapshotId);

  /**
   * The ranges of the snapshot's image that hold data, from {@code startingOffset}; a snapshot
   * deleted while they are read ends them with NOT_FOUND ({@link BlockStream#checkPresent}).
   */
  BlockStream allocatedBlocks(String snapshotId, long startingOffset);
}
