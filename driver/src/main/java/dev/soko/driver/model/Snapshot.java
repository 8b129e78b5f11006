package dev.soko.driver.model;

import java.time.Instant;

/**
 * A point-in-time copy of a volume. Copies are complete when returned, so a snapshot is ready to
 * use unless its image file has gone since (damage from outside the driver): then restoring from it
 * fails, and {@code readyToUse} says so.
 */
public record Snapshot(
    String id,
    String name,
    String sourceVolumeId,
    long sizeBytes,
    Instant createdAt,
    boolean readyToUse) {}
