package dev.soko.operator.model;

import dev.soko.api.v1alpha1.FsType;
import dev.soko.api.v1alpha1.PoolSpec;
import dev.soko.api.v1alpha1.StorageClassSpec;
import dev.soko.api.v1alpha1.StorageClusterSpec;
import dev.soko.driver.config.PoolConfig;
import java.util.List;

/**
 * The CRD's filesystem rules, repeated for {@code render} and an older CRD, from the driver's table
 * of backends: a pool lists only filesystems its backend serves, and a class's filesystem (given,
 * or its pool's default) must be one its pool allows. A class naming an unknown pool is
 * SpecValidator's.
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
    PoolConfig.Backend backend = PoolBackends.facts(p);
    for (FsType fs : p.getFsTypes()) {
      if (backend.fsTypes().contains(fs.name())) {
        continue;
      }
      if (!backend.formatsVolumes()) {
        problems.add(
            "spec.pools[].fsTypes of "
                + backend.crdName()
                + " pool '"
                + p.getName()
                + "' may name "
                + String.join(", ", backend.fsTypes())
                + " only, not "
                + fs
                + ": its volumes are "
                + backend.defaultFsType()
                + " subvolumes of the pool's own filesystem");
      } else {
        problems.add(
            "spec.pools[].fsTypes of pool '"
                + p.getName()
                + "' may name "
                + fs
                + " only with backend "
                + servingBackend(fs)
                + ": an "
                + backend.crdName()
                + " pool formats its volumes "
                + String.join(" or ", backend.fsTypes()));
      }
    }
  }

  private static void storageClass(
      StorageClassSpec c, PoolSpec p, StorageClusterSpec spec, List<String> problems) {
    FsType fs = PoolBackends.fsTypeOf(c, spec);
    PoolConfig.Backend backend = PoolBackends.facts(p);
    if (!backend.fsTypes().contains(fs.name())) {
      problems.add(
          "spec.storageClasses[].fsType of class '"
              + c.getName()
              + "' is "
              + fs
              + (backend.formatsVolumes()
                  ? ", which needs a "
                      + servingBackend(fs)
                      + " pool; pool '"
                      + p.getName()
                      + "' is "
                      + backend.crdName()
                  : ", but pool '"
                      + p.getName()
                      + "' is "
                      + backend.crdName()
                      + ": it serves "
                      + String.join(", ", backend.fsTypes())
                      + " only"));
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

  /** The CRD's name of the backend that serves {@code fs}. */
  private static String servingBackend(FsType fs) {
    return PoolConfig.Backend.serving(fs.name()).map(PoolConfig.Backend::crdName).orElse("none");
  }
}
