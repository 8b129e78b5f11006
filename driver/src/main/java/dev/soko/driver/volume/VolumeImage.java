package dev.soko.driver.volume;

import dev.soko.driver.backend.CopyForm;
import dev.soko.driver.model.AccessType;

/**
 * A ready volume as another node copies it (a clone across nodes): what the copy must know.
 *
 * @param sizeBytes the size of the volume's image: the size of a copy, and the least a clone gets
 * @param fsType the filesystem type; empty for a block volume
 * @param form how it travels: a read copy's ranges, or a tree of files (read with {@link
 *     SnapshotImages#volumeTree})
 */
public record VolumeImage(
    String volumeId,
    String pool,
    long sizeBytes,
    AccessType accessType,
    String fsType,
    CopyForm form) {

  /** A volume of a pool whose volumes are images. */
  public VolumeImage(
      String volumeId, String pool, long sizeBytes, AccessType accessType, String fsType) {
    this(volumeId, pool, sizeBytes, accessType, fsType, CopyForm.IMAGE);
  }
}
