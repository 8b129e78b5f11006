package dev.soko.driver.volume;

import dev.soko.driver.backend.Backends;
import dev.soko.driver.backend.VolumeBackend;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.mount.MountEntry;
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
 * NodeExpandVolume: grows the image file, refreshes the loop device, grows the filesystem online. A
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
  }

  long expand(String volumeId, Path volumePath, long requiredBytes, long limitBytes) {
    Path path = paths.check("volume path", volumePath);
    try (KeyedLocks.Held lock = locks.lock("volume:" + volumeId)) {
      VolumeRecord record = catalog.readyVolume(volumeId);
      long size = record.capacityBytes();
      if (requiredBytes > 0 || limitBytes > 0) {
        // Normally the controller already granted this; a node-only resize reserves it here.
        size = provisioner.grantGrowth(record, requiredBytes, limitBytes);
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
        Path mountPoint = mountPointOf(record, device, path);
        mounter.growFilesystem(device, mountPoint, record.fsType());
      }
      LOG.info("volume {} expanded on the node to {} bytes", volumeId, size);
      return size;
    }
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
