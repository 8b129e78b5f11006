package dev.soko.driver.volume;

import dev.soko.driver.backend.AttachedDevice;
import dev.soko.driver.backend.BlockDevices;
import dev.soko.driver.backend.VolumeStorage;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.model.VolumeCondition;
import dev.soko.driver.mount.FsStats;
import dev.soko.driver.mount.MountEntry;
import dev.soko.driver.mount.MountException;
import dev.soko.driver.mount.Mounter;
import dev.soko.driver.mount.PathPolicy;
import dev.soko.driver.pool.Pool;
import dev.soko.driver.state.VolumeRecord;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node side of a block-device backend: the storage is attached (a loop device for an image
 * file), formatted and mounted ({@link BlockMounts}); a mount is the volume's when it mounts the
 * attached device. On expansion the device picks up the storage's new size and the filesystem
 * grows: offline when it is an ext4 volume that is staged but not published ({@link OfflineGrowth},
 * which says why that comes first), online otherwise (xfs grows only mounted; a published volume is
 * in use).
 */
final class BlockPresentation implements Presentation {
  private static final Logger LOG = LoggerFactory.getLogger(BlockPresentation.class);

  private final Mounter mounter;
  private final VolumeStorage storage;
  private final BlockDevices devices;
  private final BlockMounts mounts;
  private final OfflineGrowth offline;

  BlockPresentation(
      Catalog catalog,
      Mounter mounter,
      PathPolicy paths,
      VolumeStorage storage,
      BlockDevices devices,
      java.util.function.Predicate<VolumeRecord> stayMounted) {
    this.mounter = mounter;
    this.storage = storage;
    this.devices = devices;
    this.mounts = new BlockMounts(catalog, mounter, storage, devices);
    this.offline = new OfflineGrowth(catalog, mounter, paths, stayMounted);
  }

  @Override
  public VolumeMounts mounts() {
    return mounts;
  }

  @Override
  public void expand(VolumeRecord record, Path location, long size, Path volumePath) {
    List<String> attached = devices.devices(location);
    for (String device : attached) {
      devices.refreshSize(device);
    }
    if (record.accessType() == AccessType.FILESYSTEM) {
      if (attached.isEmpty()) {
        throw StorageException.precondition("volume %s is not staged on this node", record.id());
      }
      String device = attached.get(0);
      if (!offline.grow(record, device)) {
        growOnline(record, device, volumePath);
      }
    }
    LOG.info("volume {} expanded on the node to {} bytes", record.id(), size);
  }

  /**
   * An attached device picks up the new size at once (a block volume is then grown, also while a
   * pod uses it). A filesystem grows as NodeExpandVolume would grow it (offline when staged and
   * unpublished ext4, else online at its staging mount); an unstaged one is grown by the next
   * stage, which grows a filesystem smaller than its device before it hands it over (ext4
   * unmounted, so whatever the node may do). What cannot grow now (the kernel refuses to grow a
   * mounted ext4 for root without CAP_SYS_RESOURCE; attached but not mounted) is left to
   * NodeExpandVolume.
   */
  @Override
  public boolean growNow(VolumeRecord record, Path location, long size) {
    List<String> attached = devices.devices(location);
    try {
      attached.forEach(devices::refreshSize);
      if (record.accessType() != AccessType.FILESYSTEM || attached.isEmpty()) {
        LOG.info("volume {} grown on the node to {} bytes", record.id(), size);
        return false;
      }
      String device = attached.get(0);
      if (!offline.grow(record, device)) {
        Path staging = stagingMount(record, device).orElse(null);
        if (staging == null) {
          LOG.info("volume {} is attached but not staged; NodeExpandVolume grows it", record.id());
          return true;
        }
        mounter.growFilesystem(device, staging, record.fsType());
      }
      LOG.info("volume {} and its filesystem grown on the node to {} bytes", record.id(), size);
      return false;
    } catch (RuntimeException e) {
      LOG.warn(
          "volume {} grew to {} bytes but its device or filesystem did not; NodeExpandVolume"
              + " grows them: {}",
          record.id(),
          size,
          e.getMessage());
      return true;
    }
  }

  private Optional<Path> stagingMount(VolumeRecord record, String device) {
    if (record.stagedAt().isEmpty()) {
      return Optional.empty();
    }
    Path staging = Path.of(record.stagedAt());
    return mounter.mountAt(staging).filter(m -> Health.mounts(m, device)).map(m -> staging);
  }

  /**
   * Growing the storage costs nothing and lets an unattached block volume be used at its new size
   * at once; an attached device and any filesystem grow on the node.
   */
  @Override
  public boolean expandsOnNode(VolumeRecord record, Path location) {
    return record.accessType() == AccessType.FILESYSTEM || !devices.devices(location).isEmpty();
  }

  /** What is really attached decides: after a node reboot stagedAt may be stale. */
  @Override
  public boolean inUse(Pool pool, Path location) {
    return !devices.devices(location).isEmpty();
  }

  /**
   * A staged filesystem is frozen, only this volume's own: a stale record must not freeze whatever
   * is mounted at that path now. A volume with no device attached has no writer. An attached raw
   * block volume has no filesystem to freeze, and nothing stops its writer; neither does anything
   * stop one of a filesystem volume attached but not mounted where its record says it is staged.
   */
  @Override
  public CopyHold copyHold(Pool pool, VolumeRecord record, Path location) {
    List<String> attached = devices.devices(location);
    if (attached.isEmpty()) {
      return new CopyHold.Unused();
    }
    if (record.accessType() != AccessType.FILESYSTEM) {
      return new CopyHold.Unfreezable(
          "it is a raw block volume in use: a device has no filesystem to freeze, so nothing"
              + " stops its writer during the copies");
    }
    Optional<Path> staging =
        Optional.of(record.stagedAt()).filter(at -> !at.isEmpty()).map(Path::of);
    boolean staged =
        staging.isPresent()
            && mounter
                .mountAt(staging.get())
                .filter(m -> Health.mountsAny(m, attached))
                .isPresent();
    if (!staged) {
      return new CopyHold.Unfreezable(
          "its device is attached but its filesystem is not mounted where it was staged, so it"
              + " cannot be frozen");
    }
    return new CopyHold.Freeze(staging.get());
  }

  @Override
  public VolumeUsage usage(
      VolumeRecord record,
      Pool pool,
      Path location,
      Health.View view,
      VolumeCondition condition,
      Path path) {
    Optional<String> device = deviceIn(view, location);
    Optional<MountEntry> mount = view.mountAt(path);
    boolean mounted =
        device.isPresent() && mount.isPresent() && Health.mounts(mount.get(), device.get());
    boolean blockStaging =
        record.accessType() == AccessType.BLOCK && path.toString().equals(record.stagedAt());
    if (!condition.abnormal() && !mounted && !blockStaging) {
      condition = new VolumeCondition(true, "the volume is not mounted at " + path);
    }
    if (record.accessType() == AccessType.BLOCK) {
      long size = storage.exists(location) ? storage.size(pool, location) : 0;
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

  @Override
  public VolumeCondition stagedCondition(
      Health.View view, Pool pool, VolumeRecord record, Path location) {
    Optional<String> device = deviceIn(view, location);
    if (device.isEmpty()) {
      return new VolumeCondition(true, "the volume is staged but its loop device is gone");
    }
    if (record.accessType() == AccessType.FILESYSTEM) {
      Optional<MountEntry> mount = view.mountAt(Path.of(record.stagedAt()));
      if (mount.isEmpty() || !Health.mounts(mount.get(), device.get())) {
        return new VolumeCondition(true, "the volume is staged but its staging mount is gone");
      }
    }
    return VolumeCondition.HEALTHY;
  }

  /** The device the view's inventory shows attached to the volume's storage. */
  private Optional<String> deviceIn(Health.View view, Path location) {
    return devices.backedBy(view.devices(), location, false).stream().findFirst();
  }

  @Override
  public Map<AttachedDevice, Path> attachedIn(Pool pool) {
    return devices.attachedIn(pool);
  }

  @Override
  public void detach(String device) {
    devices.detach(device);
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
      if (published.isEmpty()) {
        // Staged only, and kept mounted: its attributes hold state in the mount (a key).
        throw StorageException.precondition(
            "volume %s stays mounted while staged (its attributes keep state in the mount, such"
                + " as an encryption key), so it cannot be grown offline now, and %s",
            record.id(), e.getMessage());
      }
      throw StorageException.precondition(
          "volume %s is published at %s, so it cannot be grown offline, and %s",
          record.id(), String.join(", ", published), e.getMessage());
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
