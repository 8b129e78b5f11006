package dev.soko.driver.volume;

import dev.soko.driver.backend.CopyForm;
import dev.soko.driver.model.AccessType;
import java.nio.file.Path;

/**
 * A ready snapshot's image as another node copies it: what the copy must know, and the file to read
 * (opened read-only by the reader; nothing in the pool may change because of a read).
 *
 * @param sizeBytes the size of the image: the least a volume restored from it gets
 * @param fsType the filesystem type; empty for a block snapshot
 * @param path the image, or the root of the snapshot's tree when {@code form} is FILE_TREE
 * @param form how it travels: an image's ranges, or a tree of files (read with {@link
 *     SnapshotImages#snapshotTree})
 */
public record SnapshotImage(
    String snapshotId,
    String pool,
    long sizeBytes,
    AccessType accessType,
    String fsType,
    Path path,
    CopyForm form) {

  /** The snapshot of a pool whose snapshots are images. */
  public SnapshotImage(
      String snapshotId,
      String pool,
      long sizeBytes,
      AccessType accessType,
      String fsType,
      Path path) {
    this(snapshotId, pool, sizeBytes, accessType, fsType, path, CopyForm.IMAGE);
  }
}
