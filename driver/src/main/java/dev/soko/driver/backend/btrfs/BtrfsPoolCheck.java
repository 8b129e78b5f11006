package dev.soko.driver.backend.btrfs;

import dev.soko.driver.btrfs.Btrfs;
import dev.soko.driver.btrfs.BtrfsException;
import dev.soko.driver.mount.MountEntry;
import dev.soko.driver.pool.PoolVerdict;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Supplier;

/**
 * What a btrfs-subvolume pool needs of its directory: to be on btrfs (statfs magic) with quotas
 * enabled, since without qgroups a volume's limit would not hold. A pool without them is refused
 * with the command that fixes it.
 */
final class BtrfsPoolCheck {
  private final Btrfs btrfs;
  private final Supplier<List<MountEntry>> mounts;

  BtrfsPoolCheck(Btrfs btrfs, Supplier<List<MountEntry>> mounts) {
    this.btrfs = btrfs;
    this.mounts = mounts;
  }

  PoolVerdict check(Path dir, Path real) {
    try {
      if (!btrfs.isBtrfs(real)) {
        return PoolVerdict.refused(
            "pool directory %s is not on btrfs, and backend=btrfs-subvolume needs a btrfs"
                + " filesystem with quotas enabled (mount one there, or use backend=image-file)",
            dir);
      }
      if (!btrfs.quotasEnabled(real)) {
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
