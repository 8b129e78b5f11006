package dev.soko.driver.pool;

import dev.soko.driver.btrfs.Btrfs;
import dev.soko.driver.btrfs.BtrfsException;
import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.exec.Exec;
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
 * A missing directory is refused: the driver never creates a pool's root directory. A {@code
 * btrfs-subvolume} pool must also be on btrfs (statfs magic) with quotas enabled: without qgroups a
 * volume's limit would not hold, so such a pool is refused with the command that fixes it.
 */
public final class PoolCheck {
  private final Optional<Path> kubeletDir;
  private final Supplier<List<MountEntry>> mounts;
  private final Function<Path, Optional<FileId>> stat;
  private final Optional<Btrfs> btrfs;

  /** Checks for image-file pools only (a btrfs-subvolume pool is refused: nothing checks it). */
  public PoolCheck(
      Optional<Path> kubeletDir,
      Supplier<List<MountEntry>> mounts,
      Function<Path, Optional<FileId>> stat) {
    this(kubeletDir, mounts, stat, Optional.empty());
  }

  public PoolCheck(
      Optional<Path> kubeletDir,
      Supplier<List<MountEntry>> mounts,
      Function<Path, Optional<FileId>> stat,
      Optional<Btrfs> btrfs) {
    this.kubeletDir = kubeletDir;
    this.mounts = mounts;
    this.stat = stat;
    this.btrfs = btrfs;
  }

  /** The checks against this host: its mountinfo, stat(2) and btrfs. */
  public static PoolCheck forHost(Optional<Path> kubeletDir, Exec exec) {
    return new PoolCheck(
        kubeletDir,
        () -> MountInfo.read(Path.of("/proc/self/mountinfo")),
        FileId::of,
        Optional.of(new Btrfs(exec)));
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
    if (pool.backend() == PoolConfig.Backend.BTRFS_SUBVOLUME) {
      return checkBtrfs(dir, real);
    }
    return PoolVerdict.READY;
  }

  private PoolVerdict checkBtrfs(Path dir, Path real) {
    if (btrfs.isEmpty()) {
      return PoolVerdict.refused("pool directory %s: this driver cannot check btrfs", dir);
    }
    try {
      if (!btrfs.get().isBtrfs(real)) {
        return PoolVerdict.refused(
            "pool directory %s is not on btrfs, and backend=btrfs-subvolume needs a btrfs"
                + " filesystem with quotas enabled (mount one there, or use backend=image-file)",
            dir);
      }
      if (!btrfs.get().quotasEnabled(real)) {
        return PoolVerdict.refused(
            "pool directory %s is on a btrfs filesystem with quotas disabled, so volume limits"
                + " would not hold; run 'btrfs quota enable %s'",
            dir, mountPointOf(real));
      }
    } catch (BtrfsException e) {
      return PoolVerdict.refused(
          "cannot check the btrfs of pool directory %s: %s", dir, e.getMessage());
    }
    return PoolVerdict.READY;
  }

  /** The mount point of the filesystem holding {@code path}: what {@code btrfs quota} is told. */
  private Path mountPointOf(Path path) {
    return mounts.get().stream()
        .map(MountEntry::mountPoint)
        .filter(path::startsWith)
        .reduce((a, b) -> b.getNameCount() >= a.getNameCount() ? b : a)
        .orElse(path);
  }
}
