package dev.soko.driver.volume;

import dev.soko.driver.model.VolumeCondition;

/** NodeGetVolumeStats' answer. Inode figures are 0 for block volumes. */
public record VolumeUsage(
    long totalBytes,
    long usedBytes,
    long availableBytes,
    long totalInodes,
    long usedInodes,
    long availableInodes,
    VolumeCondition condition) {}
