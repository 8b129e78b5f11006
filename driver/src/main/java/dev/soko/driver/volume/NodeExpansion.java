package dev.soko.driver.volume;

import dev.soko.driver.backend.Backends;
import dev.soko.driver.backend.VolumeBackend;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.mount.MountEntry;
import dev.soko.driver.mount.MountException;
import dev.soko.driver.mount.Mounter;
import dev.soko.driver.mount.PathPolicy;
import dev.soko.driver.pool.Pool;
import dev.soko.driver.state.VolumeRecord;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * NodeExpandVolume: grows the image file, refreshes the loop device, grows the filesystem: offline
 * when it is an ext4 volume that is staged but not published ({@link OfflineGrowth}, which says why
 * that comes first), online otherwise (xfs grows only mounted; a published volume is in use). A
 * directory volume (btrfs subvolume) has only its limit to raise; when the node-mode controller
 * raised it already this is a no-op, and behind the cluster-wide controller (which cannot see the
 * pool and always asks for node expansion) it is where the limit grows.
 */
// A KeyedLocks.Held is used only for its scope: the lock is held until the block ends.
@SuppressWarnings("try")
final class NodeExpansion {
  private static final Logger LOG = LoggerFactory.getLogger(NodeExpansion.class);

  private final Catalog catalog;
  private final KeyedLocks locks;
  private final Mounter mounter;
  private final Backends backends;
  private final PathPolicy paths;
  private final VolumeProvisioner provisioner;
  private final OfflineGrowth offline;

  NodeExpansion(
      Catalog catalog,
      KeyedLocks locks,
      Mounter mounter,
      Backends backends,
      PathPolicy paths,
      VolumeProvisioner provisioner) {
    this.catalog = catalog;
    this.locks = locks;
    this.mounter = mounter;
    this.backends = backends;
    this.paths = paths;
    this.provisioner = provisioner;
    this.offline = new OfflineGrowth(catalog, mounter, paths);
  }

  long expand(String volumeId, Path volumePath, long requiredBytes, long limitBytes) {
    Path path = paths.check("volume path", volumePath);
    try (KeyedLocks.Held lock = locks.lock("volume:" + volumeId)) {
      VolumeRecord record = catalog.readyVolume(volumeId);
      long size = record.capacityBytes();
      if (requiredBytes > 0 || limitBytes > 0) {
        // Normally the controller already granted this; a node-only resize reserves it here.
        size = provisioner.grantGrowth(record, requiredBytes, limitBytes);
        record = catalog.readyVolume(volumeId); // as saved with its new capacity
      }
      Path image = catalog.image(record);
      Pool pool = catalog.pool(record.pool());
      VolumeBackend backend = backends.of(pool);
      if (!backend.exists(image)) {
        throw StorageException.precondition("volume %s has lost its image file", volumeId);
      }
      backend.grow(pool, image, size);
      if (backend.directories().isPresent()) {
        LOG.info("volume {} has a limit of {} bytes on the node", volumeId, size);
        return size;
      }
      List<String> devices = backend.devices(image);
      for (String device : devices) {
        backend.refreshSize(device);
      }
      if (record.accessType() == AccessType.FILESYSTEM) {
        if (devices.isEmpty()) {
          throw StorageException.precondition("volume %s is not staged on this node", volumeId);
        }
        String device = devices.get(0);
        if (!offline.grow(record, device)) {
          growOnline(record, device, path);
        }
      }
      LOG.info("volume {} expanded on the node to {} bytes", volumeId, size);
      return size;
    }
  }

  private void growOnline(VolumeRecord record, String device, Path requested) {
    Path mountPoint = mountPointOf(record, device, requested);
    try {
      mounter.growFilesystem(device, mountPoint, record.fsType());
    } catch (MountException e) {
      if (e.kind() != MountException.Kind.NOT_PERMITTED || !"ext4".equals(record.fsType())) {
        throw e;
      }
      List<String> published =
          OfflineGrowth.mountsOfFilesystem(mounter.mounts(), device).stream()
              .map(m -> m.mountPoint().toString())
              .filter(at -> !at.equals(record.stagedAt()))
              .toList();
      throw StorageException.precondition(
          "volume %s is published at %s, so it cannot be grown offline, and %s",
          record.id(),
          published.isEmpty() ? mountPoint : String.join(", ", published),
          e.getMessage());
    }
    LOG.info("volume {} grown online at {}", record.id(), mountPoint);
  }

  /** The request's volume path when it mounts the volume, else the staging mount. */
  private Path mountPointOf(VolumeRecord record, String device, Path requested) {
    Optional<MountEntry> atPath = mounter.mountAt(requested);
    if (atPath.isPresent() && Health.mounts(atPath.get(), device)) {
      return requested;
    }
    if (!record.stagedAt().isEmpty()) {
      Path staging = Path.of(record.stagedAt());
      Optional<MountEntry> atStaging = mounter.mountAt(staging);
      if (atStaging.isPresent() && Health.mounts(atStaging.get(), device)) {
        return staging;
      }
    }
    throw StorageException.precondition(
        "volume %s is not mounted at %s; it must be staged to grow its filesystem",
        record.id(), requested);
  }
}
