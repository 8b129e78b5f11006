package dev.soko.driver.volume;

import dev.soko.driver.backend.VolumeBackend;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.model.VolumeCondition;
import dev.soko.driver.mount.FsStats;
import dev.soko.driver.mount.MountEntry;
import dev.soko.driver.mount.Mounter;
import dev.soko.driver.mount.PathPolicy;
import dev.soko.driver.state.VolumeRecord;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/** NodeGetVolumeStats: bytes and inodes of a mounted volume, or the size of a block volume. */
final class VolumeStats {
  private final Catalog catalog;
  private final Mounter mounter;
  private final Health health;
  private final PathPolicy paths;
  private final VolumeBackend backend;

  VolumeStats(
      Catalog catalog, Mounter mounter, Health health, PathPolicy paths, VolumeBackend backend) {
    this.backend = backend;
    this.catalog = catalog;
    this.mounter = mounter;
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
    Path image = catalog.image(record);
    Optional<String> device = view.device(image);
    Optional<MountEntry> mount = view.mountAt(path);
    boolean mounted =
        device.isPresent() && mount.isPresent() && Health.mounts(mount.get(), device.get());
    boolean blockStaging =
        record.accessType() == AccessType.BLOCK && path.toString().equals(record.stagedAt());
    if (!condition.abnormal() && !mounted && !blockStaging) {
      condition = new VolumeCondition(true, "the volume is not mounted at " + path);
    }
    if (record.accessType() == AccessType.BLOCK) {
      long size = backend.exists(image) ? backend.size(catalog.pool(record.pool()), image) : 0;
      return new VolumeUsage(size, 0, 0, 0, 0, 0, condition);
    }
    if (!mounted) {
      // Stats of whatever filesystem holds the bare directory would be someone else's numbers.
      return new VolumeUsage(0, 0, 0, 0, 0, 0, condition);
    }
    FsStats stats = mounter.stats(path);
    return new VolumeUsage(
        stats.totalBytes(),
        stats.usedBytes(),
        stats.availableBytes(),
        stats.totalInodes(),
        stats.usedInodes(),
        stats.freeInodes(),
        condition);
  }
}
