package dev.soko.operator.model;

import dev.soko.api.v1alpha1.FsType;
import dev.soko.api.v1alpha1.PoolBackend;
import dev.soko.api.v1alpha1.PoolSpec;
import dev.soko.api.v1alpha1.StorageClassSpec;
import dev.soko.api.v1alpha1.StorageClusterSpec;

/**
 * What a pool's backend means for the objects the operator renders: the driver's name for it and
 * the filesystem of the pool's storage classes. The CRD's rules (StorageClusterSpec) say the same
 * in CEL.
 */
final class PoolBackends {
  private PoolBackends() {}

  /** The pool's backend; unset (a spec written before the field existed) is ImageFile. */
  static PoolBackend of(PoolSpec pool) {
    return pool.getBackend() == null ? PoolBackend.ImageFile : pool.getBackend();
  }

  /**
   * The value of the driver's {@code --pool ...,backend=} field, or null for ImageFile: it is the
   * driver's default, and leaving it out keeps the flags (so the pod template and its hash) of
   * existing installations as they were.
   */
  static String driverName(PoolBackend backend) {
    return switch (backend) {
      case ImageFile -> null;
      case BtrfsSubvolume -> "btrfs-subvolume";
    };
  }

  /** The filesystem a class gets when it names none: the only one a BtrfsSubvolume pool serves. */
  static FsType defaultFsType(PoolBackend backend) {
    return switch (backend) {
      case ImageFile -> FsType.ext4;
      case BtrfsSubvolume -> FsType.btrfs;
    };
  }

  /** The class's fsType, else its pool's default; a class of an unknown pool gets ext4. */
  static FsType fsTypeOf(StorageClassSpec sc, StorageClusterSpec spec) {
    if (sc.getFsType() != null) {
      return sc.getFsType();
    }
    return defaultFsType(
        spec.getPools().stream()
            .filter(p -> p.getName() != null && p.getName().equals(sc.getPool()))
            .findFirst()
            .map(PoolBackends::of)
            .orElse(PoolBackend.ImageFile));
  }
}
