package dev.soko.operator.it;

import dev.soko.api.v1alpha1.PoolSpec;
import dev.soko.api.v1alpha1.StorageClassSpec;
import dev.soko.api.v1alpha1.StorageCluster;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.util.ArrayList;
import java.util.List;

/** StorageClusters for ITs; each test uses its own names so tests do not interfere. */
public final class Specs {
  private Specs() {}

  public static StorageCluster cluster(String name) {
    StorageCluster sc = new StorageCluster();
    sc.setMetadata(new ObjectMetaBuilder().withName(name).build());
    sc.setSpec(new dev.soko.api.v1alpha1.StorageClusterSpec());
    sc.getSpec().setNamespace("soko-" + name);
    sc.getSpec().getDriver().setName(name + ".csi.soko.dev");
    PoolSpec pool = new PoolSpec();
    pool.setName("main");
    pool.setPath("/var/lib/soko/" + name);
    pool.setCapacity("10Gi");
    sc.getSpec().setPools(new ArrayList<>(List.of(pool)));
    StorageClassSpec cls = new StorageClassSpec();
    cls.setName(name + "-sc");
    cls.setPool("main");
    sc.getSpec().setStorageClasses(new ArrayList<>(List.of(cls)));
    return sc;
  }
}
