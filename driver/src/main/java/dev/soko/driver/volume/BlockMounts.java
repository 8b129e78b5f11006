package dev.soko.driver.volume;

import dev.soko.driver.backend.BlockDevices;
import dev.soko.driver.backend.VolumeStorage;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.mount.MountEntry;
import dev.soko.driver.mount.Mounter;
import dev.soko.driver.mount.VolumeGeometry;
import dev.soko.driver.state.VolumeRecord;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stage (device, filesystem, mount), publish (bind mount) and their reverses for a volume attached
 * as a block device. Every call is idempotent: it looks at what is really attached and mounted and
 * does only what is missing; {@link NodeVolumes} holds the volume's lock around it.
 */
final class BlockMounts implements VolumeMounts {
  private static final Logger LOG = LoggerFactory.getLogger(BlockMounts.class);

  private final Catalog catalog;
  private final Mounter mounter;
  private final VolumeStorage storage;
  private final BlockDevices blockDevices;

  BlockMounts(Catalog catalog, Mounter mounter, VolumeStorage storage, BlockDevices devices) {
    this.catalog = catalog;
    this.mounter = mounter;
    this.storage = storage;
    this.blockDevices = devices;
  }

  @Override
  public void stage(
      VolumeRecord record, Path location, Path staging, List<String> flags, VolumeForm form) {
    storage.grow(catalog.pool(record.pool()), location, record.capacityBytes());
    List<String> attached = blockDevices.devices(location);
    refuseSecondStagingPath(record, staging, attached);
    String device = attached.isEmpty() ? attach(record, location) : attached.get(0);
    if (!attached.isEmpty()) {
      blockDevices.refreshSize(device); // the image may have grown while the driver was down
    }
    try {
      boolean mounted =
          record.accessType() == AccessType.FILESYSTEM
              && mountStaging(record, device, staging, flags, form);
      VolumeRecord staged =
          record.withStaged(staging.toString(), stageFlags(record, staging, mounted, flags));
      if (!staged.equals(record)) {
        catalog.saveVolume(staged);
      }
    } catch (RuntimeException e) {
      if (attached.isEmpty()) {
        detachQuietly(device);
      }
      throw StorageException.wrap("cannot stage volume " + record.id(), e);
    }
  }

  /** A direct-I/O loop device whose block size the volume's content allows (VolumeGeometry). */
  private String attach(VolumeRecord record, Path image) {
    int blockSize =
        record.accessType() == AccessType.BLOCK
            ? VolumeGeometry.BLOCK_VOLUME_SECTOR
            : VolumeGeometry.forFilesystem(image, catalog.pool(record.pool()).blockSize());
    return blockDevices.attach(image, blockSize);
  }

  /**
   * CSI allows one staging path per volume (the CO "SHALL ensure" it); staging at a second one
   * would mount the filesystem twice. Refused while the volume is really staged at the recorded
   * path; a record left stale (the mount vanished, e.g. after a reboot) does not block.
   */
  private void refuseSecondStagingPath(VolumeRecord record, Path staging, List<String> attached) {
    String stagedAt = record.stagedAt();
    if (stagedAt.isEmpty() || stagedAt.equals(staging.toString()) || attached.isEmpty()) {
      return;
    }
    boolean stillStaged =
        record.accessType() == AccessType.BLOCK
            || mounter
                .mountAt(Path.of(stagedAt))
                .filter(mount -> Health.mountsAny(mount, attached))
                .isPresent();
    if (stillStaged) {
      throw StorageException.precondition(
          "volume %s is already staged at %s; unstage it there before staging it at %s",
          record.id(), stagedAt, staging);
    }
  }

  /**
   * The flags the staging mount has: the request's when this stage made the mount; on a repeat,
   * those recorded when it was made (the request's when a driver that did not record them made it:
   * the kubelet repeats a stage with the same flags). Recorded so that the mount can be made again
   * the same way after it is taken down to grow the filesystem offline ({@link OfflineGrowth}).
   */
  private static List<String> stageFlags(
      VolumeRecord record, Path staging, boolean mounted, List<String> requested) {
    if (!mounted && record.stagedAt().equals(staging.toString())) {
      return record.stageFlags().orElse(requested);
    }
    return requested;
  }

  /** Mounts the staging path unless it is mounted already; true when it mounted it now. */
  private boolean mountStaging(
      VolumeRecord record, String device, Path staging, List<String> flags, VolumeForm form) {
    Optional<MountEntry> existing = mounter.mountAt(staging);
    if (existing.isPresent()) {
      if (Health.mounts(existing.get(), device)) {
        return false; // already staged: the idempotent repeat
      }
      throw StorageException.alreadyExists("staging path %s already holds another mount", staging);
    }
    // Still mounted elsewhere (e.g. published, while its staging mount was taken away): checking
    // or growing a mounted filesystem fails, and a second mount would be a second writer.
    List<Path> elsewhere = mountsOf(device);
    if (!elsewhere.isEmpty()) {
      throw StorageException.precondition(
          "volume %s is still mounted at %s; unpublish and unstage it there first",
          record.id(), elsewhere);
    }
    MountPoints.createDirectory(staging);
    Optional<String> found = mounter.detectFilesystem(device);
    boolean fresh = found.isEmpty();
    if (fresh) {
      mounter.makeFilesystem(device, record.fsType(), form.filesystemFeatures());
      LOG.info("made a {} filesystem on volume {}", record.fsType(), record.id());
    } else if (!found.get().equals(record.fsType())) {
      throw StorageException.precondition(
          "volume %s holds %s, not the recorded %s; refusing to mount it",
          record.id(), found.get(), record.fsType());
    }
    // A restore or clone larger than its source, or a volume expanded while unstaged, has a
    // filesystem smaller than its device: grow it now (ext4 before mounting, xfs after).
    boolean grown = !fresh && mounter.growUnmounted(device, record.fsType());
    mounter.mount(device, staging, record.fsType(), flags);
    if (!fresh && !grown && "xfs".equals(record.fsType())) {
      mounter.growFilesystem(device, staging, record.fsType());
    }
    return true;
  }

  @Override
  public void unstage(VolumeRecord record, Path location, Path staging) {
    List<String> devices = blockDevices.devices(location);
    Optional<MountEntry> mount = mounter.mountAt(staging);
    if (mount.isPresent() && Health.mountsAny(mount.get(), devices)) {
      mounter.unmount(staging);
    }
    for (String device : devices) {
      List<Path> users = mountsOf(device);
      if (!users.isEmpty()) {
        throw StorageException.precondition(
            "volume %s is still published at %s; unpublish it first", record.id(), users);
      }
      blockDevices.detach(device);
    }
    if (!record.stagedAt().isEmpty()) {
      catalog.saveVolume(record.withStagedAt(""));
    }
  }

  @Override
  public void publish(
      VolumeRecord record,
      Path location,
      Path staging,
      Path target,
      List<String> flags,
      boolean readOnly,
      VolumeForm form) {
    List<String> devices = blockDevices.devices(location);
    if (devices.isEmpty()) {
      throw StorageException.precondition("volume %s is not staged", record.id());
    }
    String device = devices.get(0);
    Optional<MountEntry> existing = mounter.mountAt(target);
    if (existing.isPresent()) {
      if (Health.mounts(existing.get(), device) && existing.get().readOnly() == readOnly) {
        return;
      }
      throw StorageException.alreadyExists(
          "target path %s already holds a different mount of this or another volume", target);
    }
    Path source;
    boolean created = !Files.exists(target, LinkOption.NOFOLLOW_LINKS);
    if (record.accessType() == AccessType.FILESYSTEM) {
      Optional<MountEntry> staged = mounter.mountAt(staging);
      if (staged.isEmpty() || !Health.mounts(staged.get(), device)) {
        throw StorageException.precondition("volume %s is not staged at %s", record.id(), staging);
      }
      MountPoints.createDirectory(target);
      source = form.presented(staging);
    } else {
      MountPoints.createFile(target);
      source = Path.of(device);
    }
    try {
      NodeVolumes.bind(mounter, source, target, flags);
    } catch (RuntimeException e) {
      if (created) {
        MountPoints.deleteQuietly(
            target); // creating the target is the SP's part; a failure undoes it
      }
      throw e;
    }
  }

  @Override
  public void unpublish(VolumeRecord record, Path location, Path target) {
    List<String> devices = blockDevices.devicesHolding(location);
    // Bind mounts can be stacked by repeated attempts; peel them all off, but only this
    // volume's: a wrong target path must not unmount another volume or anything else.
    for (int i = 0; i < 8; i++) {
      Optional<MountEntry> mount = mounter.mountAt(target);
      if (mount.isEmpty()) {
        break;
      }
      if (!Health.mountsAny(mount.get(), devices)) {
        throw StorageException.precondition(
            "target path %s holds a mount that is not volume %s; leaving it alone",
            target, record.id());
      }
      mounter.unmount(target);
    }
    try {
      Files.deleteIfExists(target);
    } catch (IOException e) {
      LOG.warn("cannot remove target {} of volume {}: {}", target, record.id(), e.toString());
    }
  }

  private List<Path> mountsOf(String device) {
    return mounter.mounts().stream()
        .filter(m -> Health.mounts(m, device))
        .map(MountEntry::mountPoint)
        .toList();
  }

  private void detachQuietly(String device) {
    try {
      blockDevices.detach(device);
    } catch (RuntimeException e) {
      LOG.warn("cannot detach {} after a failed stage: {}", device, e.getMessage());
    }
  }
}
