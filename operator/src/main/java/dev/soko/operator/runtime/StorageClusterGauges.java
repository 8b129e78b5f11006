package dev.soko.operator.runtime;

import dev.soko.api.v1alpha1.NodeStatus;
import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.api.v1alpha1.StorageClusterStatus;
import io.fabric8.kubernetes.api.model.Condition;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Per-StorageCluster gauges from the status the reconciler wrote, so alerts need no
 * kube-state-metrics: {@code soko_storagecluster_nodes_desired}, {@code _nodes_ready} and {@code
 * _nodes_registered} (nodes whose CSINode lists the driver), and {@code
 * soko_storagecluster_condition{type}} (1 while the condition is True). Read at each scrape from
 * the controller's cache of StorageClusters, so the operator runs no second watch on them; a
 * standby replica's cache is empty until it leads, which is why the alerts aggregate with {@code
 * max by (storagecluster)}.
 */
final class StorageClusterGauges {
  private final Supplier<List<StorageCluster>> clusters;
  private final MultiGauge desired;
  private final MultiGauge ready;
  private final MultiGauge registered;
  private final MultiGauge conditions;

  StorageClusterGauges(Supplier<List<StorageCluster>> clusters, MeterRegistry registry) {
    this.clusters = clusters;
    this.desired = gauge(registry, "nodes.desired", "Nodes that should run the node plugin");
    this.ready = gauge(registry, "nodes.ready", "Nodes whose node plugin pod is ready");
    this.registered =
        gauge(registry, "nodes.registered", "Nodes whose CSINode object lists the driver");
    this.conditions =
        gauge(registry, "condition", "1 while the status condition of this type is True");
  }

  private static MultiGauge gauge(MeterRegistry registry, String name, String help) {
    return MultiGauge.builder("soko.storagecluster." + name).description(help).register(registry);
  }

  /** Replaces every row from the cache; a deleted StorageCluster's rows go. */
  synchronized void refresh() {
    List<StorageCluster> all = clusters.get();
    List<StorageCluster> reported =
        all.stream()
            .filter(sc -> sc.getStatus() != null && sc.getStatus().getNodes() != null)
            .toList();
    desired.register(rows(reported, NodeStatus::desired), true);
    ready.register(rows(reported, NodeStatus::ready), true);
    registered.register(rows(reported, NodeStatus::registered), true);
    List<MultiGauge.Row<?>> conditionRows = new ArrayList<>();
    for (StorageCluster sc : all) {
      StorageClusterStatus status = sc.getStatus();
      if (status == null || status.getConditions() == null) {
        continue;
      }
      for (Condition c : status.getConditions()) {
        conditionRows.add(
            MultiGauge.Row.of(
                Tags.of("storagecluster", sc.getMetadata().getName(), "type", c.getType()),
                "True".equals(c.getStatus()) ? 1 : 0));
      }
    }
    conditions.register(conditionRows, true);
  }

  private static List<MultiGauge.Row<?>> rows(
      List<StorageCluster> clusters, Function<NodeStatus, Integer> value) {
    return clusters.stream()
        .<MultiGauge.Row<?>>map(
            sc -> {
              Integer v = value.apply(sc.getStatus().getNodes());
              return MultiGauge.Row.of(
                  Tags.of("storagecluster", sc.getMetadata().getName()), v == null ? 0 : v);
            })
        .toList();
  }
}
