package dev.soko.operator.model;

import dev.soko.api.v1alpha1.FsType;
import dev.soko.api.v1alpha1.PoolBackend;
import dev.soko.api.v1alpha1.PoolSpec;
import dev.soko.api.v1alpha1.StorageClassSpec;
import dev.soko.api.v1alpha1.StorageClusterSpec;
import java.util.List;

/**
 * The CRD's filesystem rules, repeated for {@code render} and an older CRD: btrfs belongs to
 * BtrfsSubvolume pools and they serve nothing else, and a class's filesystem (given, or its pool's
 * default) must be one its pool allows. A class naming an unknown pool is SpecValidator's.
 */
final class FilesystemChecks {
  private FilesystemChecks() {}

  static void check(StorageClusterSpec spec, List<String> problems) {
    for (PoolSpec p : spec.getPools()) {
      pool(p, problems);
    }
    for (StorageClassSpec c : spec.getStorageClasses()) {
      spec.getPools().stream()
          .filter(p -> p.getName() != null && p.getName().equals(c.getPool()))
          .findFirst()
          .ifPresent(p -> storageClass(c, p, spec, problems));
    }
  }

  private static void pool(PoolSpec p, List<String> problems) {
    if (p.getFsTypes() == null) {
      return;
    }
    boolean btrfsPool = PoolBackends.of(p) == PoolBackend.BtrfsSubvolume;
    for (FsType fs : p.getFsTypes()) {
      if (btrfsPool && fs != FsType.btrfs) {
        problems.add(
            "spec.pools[].fsTypes of BtrfsSubvolume pool '"
                + p.getName()
                + "' may name btrfs only, not "
                + fs
                + ": its volumes are subvolumes of the pool's own btrfs filesystem");
      } else if (!btrfsPool && fs == FsType.btrfs) {
        problems.add(
            "spec.pools[].fsTypes of pool '"
                + p.getName()
                + "' may name btrfs only with backend BtrfsSubvolume: an ImageFile pool formats"
                + " its image files ext4 or xfs");
      }
    }
  }

  private static void storageClass(
      StorageClassSpec c, PoolSpec p, StorageClusterSpec spec, List<String> problems) {
    FsType fs = PoolBackends.fsTypeOf(c, spec);
    boolean btrfsPool = PoolBackends.of(p) == PoolBackend.BtrfsSubvolume;
    if (btrfsPool != (fs == FsType.btrfs)) {
      problems.add(
          "spec.storageClasses[].fsType of class '"
              + c.getName()
              + "' is "
              + fs
              + (btrfsPool
                  ? ", but pool '" + p.getName() + "' is BtrfsSubvolume: it serves btrfs only"
                  : ", which needs a BtrfsSubvolume pool; pool '"
                      + p.getName()
                      + "' is ImageFile"));
    } else if (p.getFsTypes() != null
        && !p.getFsTypes().isEmpty()
        && !p.getFsTypes().contains(fs)) {
      problems.add(
          "spec.storageClasses[].fsType of class '"
              + c.getName()
              + "' is "
              + fs
              + (c.getFsType() == null ? " (its pool's default)" : "")
              + ", not among the fsTypes "
              + p.getFsTypes()
              + " of pool '"
              + p.getName()
              + "'");
    }
  }
}
