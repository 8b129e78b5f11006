package dev.soko.driver.volume;

import dev.soko.driver.model.AccessType;

/**
 * A ready volume as another node copies it (a clone across nodes): what the copy must know.
 *
 * @param sizeBytes the size of the volume's image: the size of a copy, and the least a clone gets
 * @param fsType the filesystem type; empty for a block volume
 */
public record VolumeImage(
    String volumeId, String pool, long sizeBytes, AccessType accessType, String fsType) {}
