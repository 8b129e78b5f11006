package dev.soko.operator.model;

import dev.soko.api.v1alpha1.FsType;
import dev.soko.api.v1alpha1.PoolBackend;
import dev.soko.api.v1alpha1.PoolSpec;
import dev.soko.api.v1alpha1.StorageClassSpec;
import dev.soko.api.v1alpha1.StorageClusterSpec;
import dev.soko.driver.config.PoolConfig;
import java.util.ArrayList;
import java.util.List;

/**
 * StorageCluster specs that the table of backends ({@link PoolConfig.Backend}) accepts or refuses,
 * one per backend and filesystem: a pool listing it, a class naming it, a class left to its pool's
 * default. The CRD's rules (on the API server) and the operator's checks must each answer as the
 * table does; a new row or filesystem is covered without a new case.
 */
public final class BackendFactCases {
  private BackendFactCases() {}

  /** One spec and whether the table allows it. */
  public record Case(String name, StorageClusterSpec spec, boolean allowed) {
    @Override
    public String toString() {
      return name + (allowed ? " is allowed" : " is refused");
    }
  }

  public static List<Case> all() {
    List<Case> cases = new ArrayList<>();
    for (PoolConfig.Backend row : PoolConfig.Backend.values()) {
      PoolBackend backend = PoolBackend.valueOf(row.crdName());
      for (FsType fs : FsType.values()) {
        boolean served = row.fsTypes().contains(fs.name());
        cases.add(
            new Case(
                row.crdName() + " pool listing " + fs,
                spec(pool(backend, List.of(fs)), null),
                served));
        cases.add(
            new Case(
                "class of fsType " + fs + " on a " + row.crdName() + " pool",
                spec(pool(backend, null), storageClass(fs)),
                served));
        if (served) {
          cases.add(
              new Case(
                  "class without fsType on a " + row.crdName() + " pool listing only " + fs,
                  spec(pool(backend, List.of(fs)), storageClass(null)),
                  fs.name().equals(row.defaultFsType())));
        }
      }
    }
    return cases;
  }

  private static StorageClusterSpec spec(PoolSpec pool, StorageClassSpec storageClass) {
    StorageClusterSpec spec = new StorageClusterSpec();
    spec.setPools(new ArrayList<>(List.of(pool)));
    spec.setStorageClasses(
        storageClass == null ? new ArrayList<>() : new ArrayList<>(List.of(storageClass)));
    return spec;
  }

  private static PoolSpec pool(PoolBackend backend, List<FsType> fsTypes) {
    PoolSpec pool = new PoolSpec();
    pool.setName("main");
    pool.setPath("/var/lib/soko/main");
    pool.setBackend(backend);
    pool.setFsTypes(fsTypes == null ? null : new ArrayList<>(fsTypes));
    return pool;
  }

  private static StorageClassSpec storageClass(FsType fsType) {
    StorageClassSpec storageClass = new StorageClassSpec();
    storageClass.setName("main");
    storageClass.setPool("main");
    storageClass.setFsType(fsType);
    return storageClass;
  }
}
