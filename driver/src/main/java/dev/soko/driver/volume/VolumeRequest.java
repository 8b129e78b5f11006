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
 * @param mutableParameters the VolumeAttributesClass parameters (IO limits), empty for none
 */
public record VolumeRequest(
    String name,
    long requiredBytes,
    long limitBytes,
    String pool,
    AccessType accessType,
    String fsType,
    ContentSource source,
    Map<String, String> parameters,
    Map<String, String> mutableParameters) {
  /** A request without mutable parameters. */
  public VolumeRequest(
      String name,
      long requiredBytes,
      long limitBytes,
      String pool,
      AccessType accessType,
      String fsType,
      ContentSource source,
      Map<String, String> parameters) {
    this(name, requiredBytes, limitBytes, pool, accessType, fsType, source, parameters, Map.of());
  }
}
