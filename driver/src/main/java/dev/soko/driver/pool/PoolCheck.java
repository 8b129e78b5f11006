package dev.soko.driver.pool;

import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.mount.FileId;
import dev.soko.driver.mount.MountEntry;
import dev.soko.driver.mount.MountInfo;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Decides whether a configured pool directory may be used on this node, before anything is written
 * into it. In the node plugin every pool is a hostPath volume that the kubelet makes with {@code
 * DirectoryOrCreate}: when the disk meant for the pool is not mounted, the kubelet creates an empty
 * directory on the node's root filesystem instead. Two checks catch that:
 *
 * <ul>
 *   <li>{@code requireMountPoint}: the directory must be the root of a mounted filesystem. Inside a
 *       container every hostPath is a bind mount, so "is a mount point" proves nothing; the mount's
 *       root field in mountinfo does: it is "/" only when the host directory is itself the root of
 *       a filesystem, and the host path of a subdirectory otherwise.
 *   <li>{@code allowRootFilesystem=false}: the directory must not be on the filesystem of the
 *       kubelet's directory (the node's root filesystem in practice). Compared by device number
 *       with {@code <kubelet dir>/plugins}, which the node plugin always mounts from the host (the
 *       container's own {@code <kubelet dir>} is on the image's filesystem). Without a kubelet
 *       directory (the driver run by hand, csi-sanity, the tests) this check is off.
 * </ul>
 *
 * A missing directory is refused: the driver never creates a pool's root directory. A directory
 * that passes these is then checked by its backend ({@link BackendCheck}): a backend that needs
 * more of the filesystem (btrfs with quotas, say) refuses it there, with the command that fixes it.
 */
public final class PoolCheck {
  private final Optional<Path> kubeletDir;
  private final Supplier<List<MountEntry>> mounts;
  private final Function<Path, Optional<FileId>> stat;
  private final BackendCheck backendCheck;

  /**
   * What a pool's backend requires of its directory beyond the common checks, asked once those
   * passed: each backend's own hook, so that this class names none.
   */
  @FunctionalInterface
  public interface BackendCheck {
    /**
     * @param directory the pool's directory as configured, for messages
     * @param resolved the same with links resolved, to look at
     */
    PoolVerdict check(PoolConfig.Backend backend, Path directory, Path resolved);
  }

  public PoolCheck(
      Optional<Path> kubeletDir,
      Supplier<List<MountEntry>> mounts,
      Function<Path, Optional<FileId>> stat,
      BackendCheck backendCheck) {
    this.kubeletDir = kubeletDir;
    this.mounts = mounts;
    this.stat = stat;
    this.backendCheck = backendCheck;
  }

  /** The checks against this host: its mountinfo and stat(2), then each pool's backend. */
  public static PoolCheck forHost(Optional<Path> kubeletDir, BackendCheck backendCheck) {
    return new PoolCheck(
        kubeletDir,
        () -> MountInfo.read(Path.of("/proc/self/mountinfo")),
        FileId::of,
        backendCheck);
  }

  /** True when {@code dir} already holds a pool's records (an earlier run laid it out). */
  public static boolean holdsPool(Path dir) {
    return Files.isDirectory(dir.resolve(".soko"));
  }

  public PoolVerdict check(PoolConfig pool) {
    Path dir = pool.path();
    Path real;
    try {
      real = dir.toRealPath();
    } catch (IOException e) {
      return PoolVerdict.refused(
          "pool directory %s does not exist (the driver never creates it; mount the pool's"
              + " filesystem there)",
          dir);
    }
    if (!Files.isDirectory(real)) {
      return PoolVerdict.refused("pool path %s is not a directory", dir);
    }
    if (pool.requireMountPoint()) {
      Optional<MountEntry> top =
          mounts.get().stream().filter(m -> m.mountPoint().equals(real)).reduce((a, b) -> b);
      if (top.isEmpty()) {
        return PoolVerdict.refused(
            "pool directory %s is not a mount point, and requireMountPoint is set", dir);
      }
      if (!"/".equals(top.get().root())) {
        return PoolVerdict.refused(
            "pool directory %s is the subdirectory %s of the filesystem on %s, not the root of a"
                + " mounted filesystem, and requireMountPoint is set",
            dir, top.get().root(), top.get().source());
      }
    }
    if (!pool.allowRootFilesystem() && kubeletDir.isPresent()) {
      Path reference = kubeletDir.get().resolve("plugins");
      Optional<FileId> root = stat.apply(reference);
      if (root.isEmpty()) {
        return PoolVerdict.refused(
            "cannot tell whether pool directory %s is on the node's root filesystem: %s is"
                + " missing",
            dir, reference);
      }
      Optional<FileId> own = stat.apply(real);
      if (own.map(id -> id.device() == root.get().device()).orElse(true)) {
        return PoolVerdict.refused(
            "pool directory %s is on the node's root filesystem (the one holding %s), and"
                + " allowRootFilesystem is not set; mount a dedicated filesystem there. An empty"
                + " directory here usually means the disk was not mounted when the kubelet created"
                + " the directory",
            dir, kubeletDir.get());
      }
    }
    return backendCheck.check(pool.backend(), dir, real);
  }
}
