package dev.soko.driver.model;

import java.time.Instant;

/** A volume as the engine records it. {@code fsType} is empty for block volumes. */
public record Volume(
    String id,
    String name,
    String pool,
    long capacityBytes,
    AccessType accessType,
    String fsType,
    ContentSource source,
    Instant createdAt,
    VolumeCondition condition) {}
