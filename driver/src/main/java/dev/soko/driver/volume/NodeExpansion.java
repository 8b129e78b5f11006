package dev.soko.driver.volume;

import dev.soko.driver.backend.Backends;
import dev.soko.driver.backend.VolumeBackend;
import dev.soko.driver.mount.PathPolicy;
import dev.soko.driver.pool.Pool;
import dev.soko.driver.state.VolumeRecord;
import java.nio.file.Path;

/**
 * NodeExpandVolume: grows the volume's storage, then has the pool's {@link Presentation} make the
 * volume as the workload sees it that large (a device and its filesystem, or nothing more for a
 * directory whose limit the grow raised).
 */
// A KeyedLocks.Held is used only for its scope: the lock is held until the block ends.
@SuppressWarnings("try")
final class NodeExpansion {
  private final Catalog catalog;
  private final VolumeLocks locks;
  private final Backends backends;
  private final Presentations presentations;
  private final PathPolicy paths;
  private final GrowthGrants grants;

  NodeExpansion(
      Catalog catalog,
      VolumeLocks locks,
      Backends backends,
      Presentations presentations,
      PathPolicy paths,
      GrowthGrants grants) {
    this.catalog = catalog;
    this.locks = locks;
    this.backends = backends;
    this.presentations = presentations;
    this.paths = paths;
    this.grants = grants;
  }

  long expand(String volumeId, Path volumePath, long requiredBytes, long limitBytes) {
    Path path = paths.check("volume path", volumePath);
    try (KeyedLocks.Held lock = locks.volume(volumeId)) {
      VolumeRecord record = catalog.readyVolume(volumeId);
      long size = record.capacityBytes();
      if (requiredBytes > 0 || limitBytes > 0) {
        // Normally the controller already granted this; a node-only resize reserves it here.
        size = grants.grant(record, requiredBytes, limitBytes);
        record = catalog.readyVolume(volumeId); // as saved with its new capacity
      }
      Grown grown = growStorage(catalog, backends, record, size);
      presentations.of(grown.pool()).expand(record, grown.image(), size, path);
      return size;
    }
  }

  /** A volume whose storage has grown: its pool and storage, for the presentation's step. */
  record Grown(Pool pool, Path image) {}

  /**
   * Grows the storage of {@code record} to {@code size} (a no-op when it is that large); the caller
   * holds the volume's lock and has granted the size. FAILED_PRECONDITION when the storage is lost.
   */
  static Grown growStorage(Catalog catalog, Backends backends, VolumeRecord record, long size) {
    Path image = catalog.location(record);
    Pool pool = catalog.pool(record.pool());
    VolumeBackend backend = backends.of(pool);
    if (!backend.exists(image)) {
      throw StorageException.precondition("volume %s has lost its image file", record.id());
    }
    backend.grow(pool, image, size);
    return new Grown(pool, image);
  }
}
