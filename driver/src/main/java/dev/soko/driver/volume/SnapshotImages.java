package dev.soko.driver.volume;

/**
 * The snapshots this node holds as images, for the node-to-node data path (docs/design.md, "Node to
 * node"): another node reads a snapshot's allocated ranges from its image. Failures are {@link
 * StorageException}s with the CSI code's reason.
 */
public interface SnapshotImages {
  /**
   * The ready snapshot's image, or the root of its tree where its form is FILE_TREE: NOT_FOUND when
   * this node holds no ready snapshot of that ID.
   */
  SnapshotImage snapshotSource(String snapshotId);

  /**
   * The ranges of the snapshot's image that hold data, from {@code startingOffset}; a snapshot
   * deleted while they are read ends them with NOT_FOUND ({@link BlockStream#checkPresent}).
   */
  BlockStream allocatedBlocks(String snapshotId, long startingOffset);

  /**
   * The ready volume's facts, for a clone on another node: NOT_FOUND when this node holds no ready
   * volume of that ID. A node that copies no volumes answers FAILED_PRECONDITION.
   */
  default VolumeImage volumeSource(String volumeId) {
    throw StorageException.precondition("this node serves no reads of volumes");
  }

  /**
   * A point-in-time copy of the ready volume, taken now, for one read; closing its {@link
   * ReadCopy#blocks() blocks} removes it. Fails as {@link #volumeSource} does, FAILED_PRECONDITION
   * for a volume of form FILE_TREE, and RESOURCE_EXHAUSTED when the pool has no room for the copy.
   */
  default ReadCopy readCopy(String volumeId) {
    throw StorageException.precondition("this node serves no reads of volumes");
  }

  /**
   * The ready snapshot of form FILE_TREE as a tree to read: NOT_FOUND as for {@link
   * #snapshotSource}, FAILED_PRECONDITION for a snapshot of form IMAGE.
   */
  default FileTree snapshotTree(String snapshotId) {
    throw StorageException.precondition("this node serves no trees of files");
  }

  /**
   * A read-only snapshot of the ready volume of form FILE_TREE, taken now for one read; closing the
   * tree removes it. Fails as {@link #readCopy} does, FAILED_PRECONDITION for a volume of form
   * IMAGE.
   */
  default FileTree volumeTree(String volumeId) {
    throw StorageException.precondition("this node serves no trees of files");
  }
}
