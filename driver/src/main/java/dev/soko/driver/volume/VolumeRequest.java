package dev.soko.driver.volume;

import dev.soko.driver.model.AccessType;
import dev.soko.driver.model.ContentSource;
import java.util.Map;

/**
 * A validated CreateVolume request in the engine's terms.
 *
 * @param requiredBytes the minimum capacity, 0 when the caller has none
 * @param limitBytes the maximum capacity, 0 when unlimited
 * @param pool the pool name; empty selects the node's default (first) pool
 * @param fsType filesystem type for {@link AccessType#FILESYSTEM}; empty selects the pool's default
 * @param parameters the StorageClass parameters, kept to detect conflicting repeated requests
 */
public record VolumeRequest(
    String name,
    long requiredBytes,
    long limitBytes,
    String pool,
    AccessType accessType,
    String fsType,
    ContentSource source,
    Map<String, String> parameters) {}
