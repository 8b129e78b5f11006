package dev.soko.operator.model;

import dev.soko.api.v1alpha1.FsType;
import dev.soko.api.v1alpha1.PoolBackend;
import dev.soko.api.v1alpha1.PoolSpec;
import dev.soko.api.v1alpha1.StorageClassSpec;
import dev.soko.api.v1alpha1.StorageClusterSpec;
import dev.soko.driver.config.PoolConfig;

/**
 * What a pool's backend means for the objects the operator renders, read from the driver's table of
 * backends ({@link PoolConfig.Backend}): the driver's name for it and the filesystem of the pool's
 * storage classes. The CRD's rules (StorageClusterSpec) say the same in CEL.
 */
final class PoolBackends {
  private PoolBackends() {}

  /** The pool's backend; unset (a spec written before the field existed) is ImageFile. */
  static PoolBackend of(PoolSpec pool) {
    return pool.getBackend() == null ? PoolBackend.ImageFile : pool.getBackend();
  }

  /** The row of the table of backends for a pool's backend. */
  static PoolConfig.Backend facts(PoolSpec pool) {
    return facts(of(pool));
  }

  /** The row of the table of backends that the CRD's name stands for. */
  static PoolConfig.Backend facts(PoolBackend backend) {
    return PoolConfig.Backend.ofCrd(backend.name())
        .orElseThrow(() -> new IllegalStateException("no backend is called " + backend));
  }

  /**
   * The value of the driver's {@code --pool ...,backend=} field, or null for ImageFile: it is the
   * driver's default, and leaving it out keeps the flags (so the pod template and its hash) of
   * existing installations as they were.
   */
  static String driverName(PoolBackend backend) {
    PoolConfig.Backend facts = facts(backend);
    return facts == PoolConfig.Backend.IMAGE_FILE ? null : facts.flagName();
  }

  /** The filesystem a class gets when it names none: its pool's backend's default. */
  static FsType defaultFsType(PoolBackend backend) {
    return FsType.valueOf(facts(backend).defaultFsType());
  }

  /** The class's fsType, else its pool's default; a class of an unknown pool gets ImageFile's. */
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
