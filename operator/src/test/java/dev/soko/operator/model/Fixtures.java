package dev.soko.operator.model;

import dev.soko.api.v1alpha1.StorageCluster;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.InputStream;

/** Test StorageClusters. */
public final class Fixtures {
  private Fixtures() {}

  /** A fresh copy of test resource storagecluster-sample.yaml. */
  public static StorageCluster sample() {
    InputStream in = Fixtures.class.getResourceAsStream("/storagecluster-sample.yaml");
    return Serialization.unmarshal(in, StorageCluster.class);
  }
}
