package dev.soko.driver.model;

import java.time.Instant;

/**
 * A point-in-time copy of a volume. Copies are complete when returned, so a snapshot is ready to
 * use unless its image file has gone since (damage from outside the driver): then restoring from it
 * fails, and {@code readyToUse} says so.
 *
 * @param sizeBytes the smallest capacity a restore may ask for: its source's requested capacity
 *     when it was taken (a restore always gets at least the snapshot's real size)
 * @param groupSnapshotId the volume group snapshot it was taken in, or empty
 */
public record Snapshot(
    String id,
    String name,
    String sourceVolumeId,
    long sizeBytes,
    Instant createdAt,
    boolean readyToUse,
    String groupSnapshotId) {}
