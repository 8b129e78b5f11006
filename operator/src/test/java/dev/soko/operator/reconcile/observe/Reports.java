package dev.soko.operator.reconcile.observe;

import dev.soko.api.v1alpha1.StorageNode;
import dev.soko.api.v1alpha1.StorageNodePool;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.time.Instant;
import java.util.List;

/** StorageNode reports as the driver writes them, for the aggregation's unit tests. */
public final class Reports {
  public static final Instant NOW = Instant.parse("2026-12-01T12:00:00Z");

  private Reports() {}

  public static StorageNode report(
      String cluster, String node, Instant at, StorageNodePool... pools) {
    StorageNode r = new StorageNode();
    r.setMetadata(
        new ObjectMetaBuilder()
            .withName(cluster + "." + node)
            .addToLabels(StorageNode.LABEL_CLUSTER, cluster)
            .addToLabels(StorageNode.LABEL_NODE, node)
            .build());
    r.setNode(node);
    r.setObservedTime(at.toString());
    r.setPools(List.of(pools));
    r.setReady(
        (int) List.of(pools).stream().filter(p -> p.state().equals(StorageNodePool.READY)).count());
    r.setVolumes(
        List.of(pools).stream().mapToInt(p -> p.volumes() == null ? 0 : p.volumes()).sum());
    return r;
  }

  /** An open, Ready pool: {@code size} bytes, {@code used} of them used, {@code headroom} left. */
  public static StorageNodePool ready(
      String pool, long size, long used, long headroom, int volumes) {
    return new StorageNodePool(
        pool, StorageNodePool.READY, null, size, used, used, headroom, volumes);
  }

  public static StorageNodePool refused(String pool, String why) {
    return new StorageNodePool(pool, StorageNodePool.REFUSED, why, null, null, null, null, null);
  }

  public static StorageNodePool notSelected(String pool) {
    return new StorageNodePool(
        pool,
        StorageNodePool.NOT_SELECTED,
        "node selector does not match",
        null,
        null,
        null,
        null,
        null);
  }
}
