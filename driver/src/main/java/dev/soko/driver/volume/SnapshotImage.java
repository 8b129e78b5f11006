package dev.soko.driver.volume;

import dev.soko.driver.model.AccessType;
import java.nio.file.Path;

/**
 * A ready snapshot's image as another node copies it: what the copy must know, and the file to read
 * (opened read-only by the reader; nothing in the pool may change because of a read).
 *
 * @param sizeBytes the size of the image: the least a volume restored from it gets
 * @param fsType the filesystem type; empty for a block snapshot
 */
public record SnapshotImage(
    String snapshotId,
    String pool,
    long sizeBytes,
    AccessType accessType,
    String fsType,
    Path path) {}
