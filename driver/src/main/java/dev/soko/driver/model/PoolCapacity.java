package dev.soko.driver.model;

/**
 * A pool's capacity as GetCapacity reports it, over-provisioning included.
 *
 * @param maximumVolumeBytes the largest volume a CreateVolume could get now
 */
public record PoolCapacity(
    String pool, long totalBytes, long availableBytes, long maximumVolumeBytes) {}
