package dev.soko.driver.volume;

import dev.soko.driver.backend.Backends;
import dev.soko.driver.backend.BlockDevices;
import dev.soko.driver.backend.VolumeBackend;
import dev.soko.driver.iolimit.DeviceNumbers;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.mount.MountEntry;
import dev.soko.driver.mount.MountOptions;
import dev.soko.driver.mount.Mounter;
import dev.soko.driver.mount.PathPolicy;
import dev.soko.driver.state.VolumeRecord;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.BiConsumer;

/**
 * The node half: stage, publish and their reverses. Checks the request against the volume's record
 * and holds the volume's lock; the pool's {@link Presentation} does the mounting (a block device
 * attached, formatted and mounted, or a directory bind-mounted). Every call is idempotent: it looks
 * at what is really attached and mounted and does only what is missing.
 */
// A KeyedLocks.Held is used only for its scope: the lock is held until the block ends.
@SuppressWarnings("try")
final class NodeVolumes {
  private final Catalog catalog;
  private final VolumeLocks locks;
  private final Backends backends;
  private final Presentations presentations;
  private final PathPolicy paths;
  private final Mounter mounter;

  NodeVolumes(
      Catalog catalog,
      VolumeLocks locks,
      Backends backends,
      Presentations presentations,
      PathPolicy paths,
      Mounter mounter) {
    this.mounter = mounter;
    this.catalog = catalog;
    this.locks = locks;
    this.backends = backends;
    this.presentations = presentations;
    this.paths = paths;
  }

  private VolumeBackend backend(VolumeRecord record) {
    return backends.of(catalog.pool(record.pool()));
  }

  private Presentation presentation(VolumeRecord record) {
    return presentations.of(catalog.pool(record.pool()));
  }

  void stage(StageRequest request, VolumeForm form) {
    Path staging = paths.check("staging path", request.stagingPath());
    List<String> flags = MountOptions.checkFlags(nonNull(request.mountFlags()));
    try (KeyedLocks.Held lock = locks.volume(request.volumeId())) {
      VolumeRecord record = catalog.readyVolume(request.volumeId());
      checkAccess(record, request.accessType());
      String fsType = request.fsType() == null ? "" : request.fsType();
      if (record.accessType() == AccessType.FILESYSTEM
          && !fsType.isEmpty()
          && !fsType.equals(record.fsType())) {
        throw StorageException.invalid(
            "volume %s has filesystem %s, not %s", record.id(), record.fsType(), fsType);
      }
      Path image = requireImage(record);
      presentation(record).mounts().stage(record, image, staging, flags, form);
    }
  }

  void unstage(String volumeId, Path stagingPath) {
    Path staging = paths.check("staging path", stagingPath);
    try (KeyedLocks.Held lock = locks.volume(volumeId)) {
      VolumeRecord record = recorded(volumeId);
      presentation(record).mounts().unstage(record, catalog.location(record), staging);
    }
  }

  void publish(PublishRequest request, VolumeForm form) {
    Path staging = paths.check("staging path", request.stagingPath());
    Path target = paths.check("target path", request.targetPath());
    List<String> flags = new ArrayList<>(MountOptions.checkFlags(nonNull(request.mountFlags())));
    if (request.readOnly() && !flags.contains("ro")) {
      flags.add("ro");
    }
    boolean readOnly = flags.contains("ro");
    try (KeyedLocks.Held lock = locks.volume(request.volumeId())) {
      VolumeRecord record = catalog.readyVolume(request.volumeId());
      checkAccess(record, request.accessType());
      Path image = requireImage(record);
      presentation(record).mounts().publish(record, image, staging, target, flags, readOnly, form);
    }
  }

  /** Whether anything is mounted at {@code path} (a staging path the caller checked). */
  boolean mountedAt(Path path) {
    return mounter.mountAt(path).isPresent();
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
    try (KeyedLocks.Held lock = locks.volume(volumeId)) {
      VolumeRecord record = recorded(volumeId);
      presentation(record).mounts().unpublish(record, catalog.location(record), target);
    }
  }

  /**
   * The number ("major:minor") of the block device of its own that the volume is attached through
   * on this node, for its IO limits; empty for a volume that has none (a btrfs subvolume) or is not
   * attached.
   */
  Optional<String> deviceNumber(String volumeId) {
    VolumeRecord record = recorded(volumeId);
    if (!(backend(record).nodeSide() instanceof BlockDevices devices)) {
      return Optional.empty();
    }
    return devices.devices(catalog.location(record)).stream()
        .findFirst()
        .flatMap(DeviceNumbers::of);
  }

  /**
   * Calls {@code published} for each pod this volume is published to on this node, by target, as
   * the mount table has them: a restarted driver keeps no publications in memory. Only targets in
   * the kubelet's layout name their pod ({@link KubeletTargets}); others are left out. Holds the
   * volume's lock, so that no publish or unpublish of it runs in between.
   */
  void forEachPodPublication(String volumeId, BiConsumer<Path, String> published) {
    try (KeyedLocks.Held lock = locks.volume(volumeId)) {
      VolumeRecord record = recorded(volumeId);
      if (!(backend(record).nodeSide() instanceof BlockDevices devices)) {
        return;
      }
      List<String> attached = devices.devices(catalog.location(record));
      for (MountEntry m : mounter.mounts()) {
        if (Health.mountsAny(m, attached)) {
          KubeletTargets.podUid(m.mountPoint())
              .ifPresent(pod -> published.accept(m.mountPoint(), pod));
        }
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

  private Path requireImage(VolumeRecord record) {
    Path image = catalog.location(record);
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

  private static List<String> nonNull(List<String> list) {
    return list == null ? List.of() : list;
  }
}
