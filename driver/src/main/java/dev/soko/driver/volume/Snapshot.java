package dev.soko.driver.volume;

import java.time.Instant;

/** A point-in-time copy of a volume. Copies are complete when returned, so always ready to use. */
public record Snapshot(
    String id, String name, String sourceVolumeId, long sizeBytes, Instant createdAt) {}
