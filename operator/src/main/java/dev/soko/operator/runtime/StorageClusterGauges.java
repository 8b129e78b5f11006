package dev.soko.operator.runtime;

import dev.soko.api.v1alpha1.NodeStatus;
import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.api.v1alpha1.StorageClusterStatus;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * Per-StorageCluster gauges from the status the reconciler wrote, so alerts need no
 * kube-state-metrics: {@code soko_storagecluster_nodes_desired}, {@code _nodes_ready} and {@code
 * _nodes_registered} (nodes whose CSINode lists the driver), and {@code
 * soko_storagecluster_condition{type}} (1 while the condition is True). Fed by a watch of its own
 * on StorageClusters, so no line of the reconciler changes for it; every replica exports the same
 * values, which is why the alerts aggregate with {@code max by (storagecluster)}.
 */
final class StorageClusterGauges implements AutoCloseable {
  private final KubernetesClient client;
  private final MultiGauge desired;
  private final MultiGauge ready;
  private final MultiGauge registered;
  private final MultiGauge conditions;
  private SharedIndexInformer<StorageCluster> informer;

  StorageClusterGauges(KubernetesClient client, MeterRegistry registry) {
    this.client = client;
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

  void start() {
    informer =
        client
            .resources(StorageCluster.class)
            .inform(
                new ResourceEventHandler<>() {
                  @Override
                  public void onAdd(StorageCluster sc) {
                    refresh();
                  }

                  @Override
                  public void onUpdate(StorageCluster before, StorageCluster after) {
                    refresh();
                  }

                  @Override
                  public void onDelete(StorageCluster sc, boolean unknownFinalState) {
                    refresh();
                  }
                });
  }

  /** Replaces every row from the informer's cache; a deleted StorageCluster's rows go. */
  private synchronized void refresh() {
    List<StorageCluster> all = informer == null ? List.of() : informer.getStore().list();
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

  @Override
  public void close() {
    if (informer != null) {
      informer.close();
    }
  }
}
