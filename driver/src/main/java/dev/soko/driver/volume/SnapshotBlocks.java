package dev.soko.driver.volume;

/**
 * Changed block tracking: which ranges of a snapshot hold data, and which differ between two
 * snapshots of one volume, for backup tools that copy only those (the CSI SnapshotMetadata
 * service). Served for snapshots whose pool's backend stores volumes as block device images;
 * failures are {@link StorageException}s with the CSI code's reason.
 */
public interface SnapshotBlocks {
  /** Whether any pool of this node can answer: only then is the service advertised. */
  boolean servesBlockMetadata();

  /**
   * The ranges of {@code snapshotId} that hold data, from {@code startingOffset}. NOT_FOUND for an
   * unknown snapshot, OUT_OF_RANGE for an offset outside it, FAILED_PRECONDITION where its pool has
   * no block device images.
   */
  BlockStream allocatedBlocks(String snapshotId, long startingOffset);

  /**
   * The ranges from {@code startingOffset} in which {@code targetSnapshotId} differs from {@code
   * baseSnapshotId}; INVALID_ARGUMENT when they are snapshots of different volumes, else as {@link
   * #allocatedBlocks}.
   */
  BlockStream changedBlocks(String baseSnapshotId, String targetSnapshotId, long startingOffset);
}
