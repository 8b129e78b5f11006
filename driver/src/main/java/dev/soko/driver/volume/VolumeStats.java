package dev.soko.driver.volume;

import dev.soko.driver.model.VolumeCondition;
import dev.soko.driver.mount.PathPolicy;
import dev.soko.driver.pool.Pool;
import dev.soko.driver.state.VolumeRecord;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * NodeGetVolumeStats: bytes and inodes of a mounted volume, or the size of a block volume, as the
 * pool's {@link Presentation} reads them.
 */
final class VolumeStats {
  private final Catalog catalog;
  private final Health health;
  private final PathPolicy paths;
  private final Presentations presentations;

  VolumeStats(Catalog catalog, Health health, PathPolicy paths, Presentations presentations) {
    this.presentations = presentations;
    this.catalog = catalog;
    this.health = health;
    this.paths = paths;
  }

  VolumeUsage usage(String volumeId, Path volumePath) {
    Path path = paths.check("volume path", volumePath);
    VolumeRecord record = catalog.readyVolume(volumeId);
    if (!Files.exists(path)) {
      throw StorageException.notFound("volume path %s does not exist", path);
    }
    Health.View view = health.view();
    VolumeCondition condition = view.condition(record);
    Path image = catalog.location(record);
    Pool pool = catalog.pool(record.pool());
    return presentations.of(pool).usage(record, pool, image, view, condition, path);
  }
}
