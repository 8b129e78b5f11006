package dev.soko.driver.volume;

import dev.soko.driver.backend.Backends;
import dev.soko.driver.backend.DirectoryVolumes;
import dev.soko.driver.backend.VolumeBackend;
import dev.soko.driver.backend.VolumeSpace;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.model.VolumeCondition;
import dev.soko.driver.mount.FsStats;
import dev.soko.driver.mount.MountEntry;
import dev.soko.driver.mount.Mounter;
import dev.soko.driver.mount.PathPolicy;
import dev.soko.driver.pool.Pool;
import dev.soko.driver.state.VolumeRecord;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * NodeGetVolumeStats: bytes and inodes of a mounted volume, or the size of a block volume. A
 * directory volume's bytes are the backend's (a btrfs qgroup's referenced bytes against its limit):
 * statfs of a subvolume shows the whole pool filesystem.
 */
final class VolumeStats {
  private final Catalog catalog;
  private final Mounter mounter;
  private final Health health;
  private final PathPolicy paths;
  private final Backends backends;

  VolumeStats(
      Catalog catalog, Mounter mounter, Health health, PathPolicy paths, Backends backends) {
    this.backends = backends;
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
    Pool pool = catalog.pool(record.pool());
    VolumeBackend backend = backends.of(pool);
    Optional<DirectoryVolumes> directories = backend.directories();
    if (directories.isPresent()) {
      return directoryUsage(directories.get(), pool, image, view.mountAt(path), condition, path);
    }
    Optional<String> device = view.device(record, image);
    Optional<MountEntry> mount = view.mountAt(path);
    boolean mounted =
        device.isPresent() && mount.isPresent() && Health.mounts(mount.get(), device.get());
    boolean blockStaging =
        record.accessType() == AccessType.BLOCK && path.toString().equals(record.stagedAt());
    if (!condition.abnormal() && !mounted && !blockStaging) {
      condition = new VolumeCondition(true, "the volume is not mounted at " + path);
    }
    if (record.accessType() == AccessType.BLOCK) {
      long size = backend.exists(image) ? backend.size(pool, image) : 0;
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

  /** No inode figures: btrfs allocates inodes as needed, so there is no count to run out of. */
  private static VolumeUsage directoryUsage(
      DirectoryVolumes directories,
      Pool pool,
      Path location,
      Optional<MountEntry> mount,
      VolumeCondition condition,
      Path path) {
    boolean mounted =
        mount.isPresent() && directories.identity(pool, location).matches(mount.get());
    if (!mounted) {
      VolumeCondition shown =
          condition.abnormal()
              ? condition
              : new VolumeCondition(true, "the volume is not mounted at " + path);
      return new VolumeUsage(0, 0, 0, 0, 0, 0, shown);
    }
    VolumeSpace space = directories.space(pool, location);
    return new VolumeUsage(
        space.limitBytes(), space.usedBytes(), space.availableBytes(), 0, 0, 0, condition);
  }
}
