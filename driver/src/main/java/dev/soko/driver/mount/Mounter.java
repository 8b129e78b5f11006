package dev.soko.driver.mount;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * Mounts, filesystems and their statistics. Failures are {@link MountException}s (and {@code
 * ExecException}s from the tools it runs); the layer above maps them to client codes.
 */
public interface Mounter {

  List<MountEntry> mounts();

  /** The topmost mount whose mount point is exactly {@code path}. */
  default Optional<MountEntry> mountAt(Path path) {
    MountEntry found = null;
    for (MountEntry entry : mounts()) {
      if (entry.mountPoint().equals(path)) {
        found = entry; // later lines are mounted on top of earlier ones
      }
    }
    return Optional.ofNullable(found);
  }

  /** Mounts a device at {@code target} with allow-listed {@code flags}. */
  void mount(String device, Path target, String fsType, List<String> flags);

  void bind(Path source, Path target);

  /** Changes a bind mount's per-mount flags (e.g. {@code ro}) in place. */
  void remountBind(Path target, List<String> flags);

  void unmount(Path target);

  /** The filesystem type found on a device, or empty when the device holds no signature at all. */
  Optional<String> detectFilesystem(String device);

  void makeFilesystem(String device, String fsType);

  /**
   * Makes a filesystem with {@code features} besides the defaults (ext4's {@code encrypt}, which a
   * volume's attributes may need); with none, as {@link #makeFilesystem(String, String)}.
   */
  default void makeFilesystem(String device, String fsType, List<String> features) {
    if (!features.isEmpty()) {
      throw new UnsupportedOperationException("filesystem features " + features);
    }
    makeFilesystem(device, fsType);
  }

  /**
   * True when the filesystem on {@code device} already spans the device, so growing it has nothing
   * to do. Known without mounting only for ext4 (its superblock); false for other filesystems.
   */
  boolean fillsDevice(String device, String fsType);

  /**
   * Grows an unmounted filesystem to fill its device where the filesystem allows that (ext4), so a
   * volume restored or expanded while unstaged needs no online resize. Filesystems that only grow
   * while mounted (xfs) are left for {@link #growFilesystem}.
   *
   * @return true when the filesystem was grown here
   */
  boolean growUnmounted(String device, String fsType);

  /** Grows a mounted filesystem to fill its (already grown) device. */
  void growFilesystem(String device, Path mountPoint, String fsType);

  FsStats stats(Path mountPoint);

  /** Suspends writes so a copy of the device is consistent; must be followed by unfreeze. */
  void freeze(Path mountPoint);

  void unfreeze(Path mountPoint);
}
