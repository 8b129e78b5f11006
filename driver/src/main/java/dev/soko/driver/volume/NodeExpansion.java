package dev.soko.driver.volume;

import dev.soko.driver.backend.VolumeBackend;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.mount.MountEntry;
import dev.soko.driver.mount.Mounter;
import dev.soko.driver.mount.PathPolicy;
import dev.soko.driver.state.VolumeRecord;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * NodeExpandVolume: grows the image file, refreshes the loop device, grows the filesystem online.
 */
// A KeyedLocks.Held is used only for its scope: the lock is held until the block ends.
@SuppressWarnings("try")
final class NodeExpansion {
  private static final Logger LOG = LoggerFactory.getLogger(NodeExpansion.class);

  private final Catalog catalog;
  private final KeyedLocks locks;
  private final Mounter mounter;
  private final VolumeBackend backend;
  private final PathPolicy paths;
  private final VolumeProvisioner provisioner;

  NodeExpansion(
      Catalog catalog,
      KeyedLocks locks,
      Mounter mounter,
      VolumeBackend backend,
      PathPolicy paths,
      VolumeProvisioner provisioner) {
    this.catalog = catalog;
    this.locks = locks;
    this.mounter = mounter;
    this.backend = backend;
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
      if (!backend.exists(image)) {
        throw StorageException.precondition("volume %s has lost its image file", volumeId);
      }
      backend.grow(catalog.pool(record.pool()), image, size);
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
