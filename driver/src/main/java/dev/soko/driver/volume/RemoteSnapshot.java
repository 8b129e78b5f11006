package dev.soko.driver.volume;

import dev.soko.driver.backend.CopyForm;
import dev.soko.driver.model.AccessType;
import java.nio.file.Path;

/**
 * A snapshot on another node, as that node describes it, and the way to copy its blocks here; or a
 * volume on another node, whose copy is of a point-in-time copy that node takes when it is read.
 */
public interface RemoteSnapshot {
  /** The snapshot's (or volume's) ID, as the caller asked for it. */
  String id();

  /** Whether it is a volume (copied for a clone) rather than a snapshot (for a restore). */
  default boolean ofVolume() {
    return false;
  }

  /** What it is, for messages: "snapshot ID" or "volume ID". */
  default String shown() {
    return (ofVolume() ? "volume " : "snapshot ") + id();
  }

  /** The name of the node that holds it. */
  String node();

  /** The size of its image: the least a volume restored from it gets. */
  long sizeBytes();

  AccessType accessType();

  /** Its filesystem type; empty for a block snapshot. */
  String fsType();

  /** How it travels, which the target pool's volumes must match. */
  default CopyForm form() {
    return CopyForm.IMAGE;
  }

  /**
   * Writes the snapshot's image into {@code target}, a new file this call creates: only the
   * allocated ranges are written (holes stay holes), the file is {@link #sizeBytes()} long and
   * synced before the call returns. Of form FILE_TREE, writes its tree of files into {@code
   * target}, an empty directory the caller made (a new volume with its limit), synced. On any
   * failure it throws a {@link StorageException} and the caller deletes {@code target}; a stream
   * cut midway is a failure, never a short copy.
   */
  void copyTo(Path target);
}
