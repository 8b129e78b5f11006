package dev.soko.driver.volume;

import dev.soko.driver.backend.Backends;
import dev.soko.driver.backend.DirectoryVolumes;
import dev.soko.driver.backend.VolumeBackend;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.mount.MountEntry;
import dev.soko.driver.mount.MountOptions;
import dev.soko.driver.mount.Mounter;
import dev.soko.driver.mount.PathPolicy;
import dev.soko.driver.mount.VolumeGeometry;
import dev.soko.driver.state.VolumeRecord;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node half: stage (loop device, filesystem, mount), publish (bind mount), their reverses, and
 * everything else that happens where the pool is. Every call is idempotent: it looks at what is
 * really attached and mounted and does only what is missing. A directory volume (a backend with
 * {@link VolumeBackend#directories}) has nothing to attach or format; {@link DirectoryMounts} binds
 * it instead.
 */
// A KeyedLocks.Held is used only for its scope: the lock is held until the block ends.
@SuppressWarnings("try")
final class NodeVolumes {
  private static final Logger LOG = LoggerFactory.getLogger(NodeVolumes.class);

  private final Catalog catalog;
  private final KeyedLocks locks;
  private final Mounter mounter;
  private final Backends backends;
  private final PathPolicy paths;
  private final DirectoryMounts directoryMounts;

  NodeVolumes(
      Catalog catalog, KeyedLocks locks, Mounter mounter, Backends backends, PathPolicy paths) {
    this.catalog = catalog;
    this.locks = locks;
    this.mounter = mounter;
    this.backends = backends;
    this.paths = paths;
    this.directoryMounts = new DirectoryMounts(catalog, mounter);
  }

  private VolumeBackend backend(VolumeRecord record) {
    return backends.of(catalog.pool(record.pool()));
  }

  void stage(StageRequest request) {
    Path staging = paths.check("staging path", request.stagingPath());
    List<String> flags = MountOptions.checkFlags(nonNull(request.mountFlags()));
    try (KeyedLocks.Held lock = locks.lock("volume:" + request.volumeId())) {
      VolumeRecord record = catalog.readyVolume(request.volumeId());
      checkAccess(record, request.accessType());
      String fsType = request.fsType() == null ? "" : request.fsType();
      if (record.accessType() == AccessType.FILESYSTEM
          && !fsType.isEmpty()
          && !fsType.equals(record.fsType())) {
        throw StorageException.invalid(
            "volume %s has filesystem %s, not %s", record.id(), record.fsType(), fsType);
      }
      VolumeBackend backend = backend(record);
      Path image = requireImage(record);
      Optional<DirectoryVolumes> directories = backend.directories();
      if (directories.isPresent()) {
        directoryMounts.stage(record, directories.get(), image, staging, flags);
        return;
      }
      backend.grow(catalog.pool(record.pool()), image, record.capacityBytes());
      List<String> attached = backend.devices(image);
      refuseSecondStagingPath(record, staging, attached);
      String device = attached.isEmpty() ? attach(record, image) : attached.get(0);
      if (!attached.isEmpty()) {
        backend.refreshSize(device); // the image may have grown while the driver was down
      }
      try {
        boolean mounted =
            record.accessType() == AccessType.FILESYSTEM
                && mountStaging(record, device, staging, flags);
        VolumeRecord staged =
            record.withStaged(staging.toString(), stageFlags(record, staging, mounted, flags));
        if (!staged.equals(record)) {
          catalog.saveVolume(staged);
        }
      } catch (RuntimeException e) {
        if (attached.isEmpty()) {
          detachQuietly(backend, device);
        }
        throw VolumeProvisioner.wrap("cannot stage volume " + record.id(), e);
      }
    }
  }

  /** A direct-I/O loop device whose block size the volume's content allows (VolumeGeometry). */
  private String attach(VolumeRecord record, Path image) {
    int blockSize =
        record.accessType() == AccessType.BLOCK
            ? VolumeGeometry.BLOCK_VOLUME_SECTOR
            : VolumeGeometry.forFilesystem(image, catalog.pool(record.pool()).blockSize());
    return backend(record).attach(image, blockSize);
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
      VolumeRecord record, String device, Path staging, List<String> flags) {
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
      mounter.makeFilesystem(device, record.fsType());
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

  void unstage(String volumeId, Path stagingPath) {
    Path staging = paths.check("staging path", stagingPath);
    try (KeyedLocks.Held lock = locks.lock("volume:" + volumeId)) {
      VolumeRecord record = recorded(volumeId);
      Path image = catalog.image(record);
      VolumeBackend backend = backend(record);
      if (backend.directories().isPresent()) {
        directoryMounts.unstage(record, backend.directories().get(), image, staging);
        return;
      }
      List<String> devices = backend.devices(image);
      Optional<MountEntry> mount = mounter.mountAt(staging);
      if (mount.isPresent() && Health.mountsAny(mount.get(), devices)) {
        mounter.unmount(staging);
      }
      for (String device : devices) {
        List<Path> users = mountsOf(device);
        if (!users.isEmpty()) {
          throw StorageException.precondition(
              "volume %s is still published at %s; unpublish it first", volumeId, users);
        }
        backend.detach(device);
      }
      if (!record.stagedAt().isEmpty()) {
        catalog.saveVolume(record.withStagedAt(""));
      }
    }
  }

  void publish(PublishRequest request) {
    Path staging = paths.check("staging path", request.stagingPath());
    Path target = paths.check("target path", request.targetPath());
    List<String> flags = new ArrayList<>(MountOptions.checkFlags(nonNull(request.mountFlags())));
    if (request.readOnly() && !flags.contains("ro")) {
      flags.add("ro");
    }
    boolean readOnly = flags.contains("ro");
    try (KeyedLocks.Held lock = locks.lock("volume:" + request.volumeId())) {
      VolumeRecord record = catalog.readyVolume(request.volumeId());
      checkAccess(record, request.accessType());
      VolumeBackend backend = backend(record);
      Path image = requireImage(record);
      if (backend.directories().isPresent()) {
        directoryMounts.publish(
            record, backend.directories().get(), image, staging, target, flags, readOnly);
        return;
      }
      List<String> devices = backend.devices(image);
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
          throw StorageException.precondition(
              "volume %s is not staged at %s", record.id(), staging);
        }
        MountPoints.createDirectory(target);
        source = staging;
      } else {
        MountPoints.createFile(target);
        source = Path.of(device);
      }
      try {
        bind(mounter, source, target, flags);
      } catch (RuntimeException e) {
        if (created) {
          MountPoints.deleteQuietly(
              target); // creating the target is the SP's part; a failure undoes it
        }
        throw e;
      }
    }
  }

  /** A bind mount of {@code source} at {@code target}, then the per-mount {@code flags}. */
  static void bind(Mounter mounter, Path source, Path target, List<String> flags) {
    mounter.bind(source, target);
    if (!flags.isEmpty()) {
      try {
        mounter.remountBind(target, flags);
      } catch (RuntimeException e) {
        mounter.unmount(target); // never leave a writable mount behind a read-only request
        throw e;
      }
    }
  }

  void unpublish(String volumeId, Path targetPath) {
    Path target = paths.check("target path", targetPath);
    try (KeyedLocks.Held lock = locks.lock("volume:" + volumeId)) {
      VolumeRecord record = recorded(volumeId);
      VolumeBackend backend = backend(record);
      if (backend.directories().isPresent()) {
        directoryMounts.unpublish(
            record, backend.directories().get(), catalog.image(record), target);
        return;
      }
      List<String> devices = backend.devicesHolding(catalog.image(record));
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
        LOG.warn("cannot remove target {} of volume {}: {}", target, volumeId, e.toString());
      }
    }
  }

  /** The volume's record in whatever state; NOT_FOUND when there is none. */
  private VolumeRecord recorded(String volumeId) {
    return catalog
        .volume(volumeId)
        .orElseThrow(
            () -> StorageException.notFound("volume %s does not exist", Catalog.shown(volumeId)));
  }

  private List<Path> mountsOf(String device) {
    return mounter.mounts().stream()
        .filter(m -> Health.mounts(m, device))
        .map(MountEntry::mountPoint)
        .toList();
  }

  private Path requireImage(VolumeRecord record) {
    Path image = catalog.image(record);
    if (!backend(record).exists(image)) {
      throw StorageException.precondition(
          "volume %s has lost its image file (see its volume condition)", record.id());
    }
    return image;
  }

  private static void checkAccess(VolumeRecord record, AccessType requested) {
    if (requested != null && requested != record.accessType()) {
      throw StorageException.invalid(
          "volume %s is a %s volume", record.id(), record.accessType().name().toLowerCase());
    }
  }

  private static void detachQuietly(VolumeBackend backend, String device) {
    try {
      backend.detach(device);
    } catch (RuntimeException e) {
      LOG.warn("cannot detach {} after a failed stage: {}", device, e.getMessage());
    }
  }

  private static List<String> nonNull(List<String> list) {
    return list == null ? List.of() : list;
  }
}
