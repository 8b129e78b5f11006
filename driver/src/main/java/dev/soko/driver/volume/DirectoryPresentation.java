package dev.soko.driver.volume;

import dev.soko.driver.backend.AttachedDevice;
import dev.soko.driver.backend.DirectoryVolumes;
import dev.soko.driver.backend.VolumeSpace;
import dev.soko.driver.model.VolumeCondition;
import dev.soko.driver.mount.MountEntry;
import dev.soko.driver.mount.Mounter;
import dev.soko.driver.pool.Pool;
import dev.soko.driver.state.VolumeRecord;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node side of a directory backend (btrfs subvolumes): a volume is never attached and holds no
 * filesystem of its own; {@link DirectoryMounts} binds it. Its capacity is the backend's limit,
 * which the storage's grow raised: when the node-mode controller raised it already node expansion
 * is a no-op, and behind the cluster-wide controller (which cannot see the pool and always asks for
 * node expansion) it is where the limit grows. Its bytes are the backend's (a btrfs qgroup's
 * referenced bytes against its limit): statfs of a subvolume shows the whole pool filesystem.
 */
final class DirectoryPresentation implements Presentation {
  private static final Logger LOG = LoggerFactory.getLogger(DirectoryPresentation.class);

  private final DirectoryVolumes volumes;
  private final DirectoryMounts mounts;

  DirectoryPresentation(Catalog catalog, Mounter mounter, DirectoryVolumes volumes) {
    this.volumes = volumes;
    this.mounts = new DirectoryMounts(catalog, mounter, volumes);
  }

  @Override
  public VolumeMounts mounts() {
    return mounts;
  }

  @Override
  public void expand(VolumeRecord record, Path location, long size, Path volumePath) {
    LOG.info("volume {} has a limit of {} bytes on the node", record.id(), size);
  }

  /** The raised limit is all there is. */
  @Override
  public boolean growNow(VolumeRecord record, Path location, long size) {
    LOG.info("volume {} has a limit of {} bytes on the node", record.id(), size);
    return false;
  }

  /** The limit the controller raised is all there is. */
  @Override
  public boolean expandsOnNode(VolumeRecord record, Path location) {
    return false;
  }

  @Override
  public boolean inUse(Pool pool, Path location) {
    return volumes.mounted(pool, location);
  }

  /**
   * A directory has no filesystem of its own: freezing the one it lives in would freeze the whole
   * pool, the snapshot being written there too, which would then wait for ever. So a mounted one
   * cannot be kept still; one mounted nowhere has no writer.
   */
  @Override
  public CopyHold copyHold(Pool pool, VolumeRecord record, Path location) {
    if (!volumes.mounted(pool, location)) {
      return new CopyHold.Unused();
    }
    return new CopyHold.Unfreezable(
        "it is a directory volume in use: it has no filesystem of its own, and freezing the pool's"
            + " would block the snapshot itself");
  }

  /** No inode figures: btrfs allocates inodes as needed, so there is no count to run out of. */
  @Override
  public VolumeUsage usage(
      VolumeRecord record,
      Pool pool,
      Path location,
      Health.View view,
      VolumeCondition condition,
      Path path) {
    Optional<MountEntry> mount = view.mountAt(path);
    boolean mounted = mount.isPresent() && volumes.identity(pool, location).matches(mount.get());
    if (!mounted) {
      VolumeCondition shown =
          condition.abnormal()
              ? condition
              : new VolumeCondition(true, "the volume is not mounted at " + path);
      return new VolumeUsage(0, 0, 0, 0, 0, 0, shown);
    }
    VolumeSpace space = volumes.space(pool, location);
    return new VolumeUsage(
        space.limitBytes(), space.usedBytes(), space.availableBytes(), 0, 0, 0, condition);
  }

  @Override
  public VolumeCondition stagedCondition(
      Health.View view, Pool pool, VolumeRecord record, Path location) {
    Optional<MountEntry> mount = view.mountAt(Path.of(record.stagedAt()));
    if (mount.isEmpty() || !volumes.identity(pool, location).matches(mount.get())) {
      return new VolumeCondition(true, "the volume is staged but its staging mount is gone");
    }
    return VolumeCondition.HEALTHY;
  }

  /** No device ever backs a directory volume. */
  @Override
  public Map<AttachedDevice, Path> attachedIn(Pool pool) {
    return Map.of();
  }

  @Override
  public void detach(String device) {
    throw new IllegalStateException("directory volumes are bind-mounted, never attached");
  }
}
