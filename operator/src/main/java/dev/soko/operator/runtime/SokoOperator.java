package dev.soko.operator.runtime;

import dev.soko.operator.model.KubernetesVersion;
import dev.soko.operator.model.VersionsTable;
import dev.soko.operator.reconcile.ClusterObserver;
import dev.soko.operator.reconcile.EventRecorder;
import dev.soko.operator.reconcile.StorageClusterReconciler;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import io.javaoperatorsdk.operator.monitoring.micrometer.MicrometerMetrics;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.function.Supplier;

/** Wires the operator in plain Java: client, observer, reconciler, metrics, leader election. */
public final class SokoOperator implements AutoCloseable {
  private final KubernetesClient client;
  private final WriteCounter writes = new WriteCounter();
  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final Operator operator;
  private final StorageClusterReconciler reconciler;
  private final StorageClusterGauges clusterGauges;

  /**
   * @param config API server connection
   * @param leaseNamespace namespace of the leader-election lease; null disables leader election
   * @param version the server version source; null reads /version
   * @param imageRegistry default registry of the versions table's images; null: unqualified
   * @param resync longest time between two reconciles of a StorageCluster without events: it picks
   *     up what no watch reports (a cluster upgrade's new server version, served APIs, workload
   *     status the informers filtered out)
   */
  public SokoOperator(
      Config config,
      String leaseNamespace,
      Supplier<KubernetesVersion> version,
      String imageRegistry,
      Duration resync) {
    this.client =
        new KubernetesClientBuilder()
            .withConfig(config)
            .withHttpClientBuilderConsumer(b -> b.addOrReplaceInterceptor("soko-writes", writes))
            .build();
    FunctionCounter.builder("soko.operator.api.writes", writes, WriteCounter::writes)
        .description("Write calls (non-GET, Leases excepted) sent to the API server")
        .register(registry);
    this.operator =
        new Operator(
            o -> {
              o.withKubernetesClient(client)
                  .withMetrics(
                      new ReconcileMetrics(
                          MicrometerMetrics.withoutPerResourceMetrics(registry), registry))
                  .withCloseClientOnStop(true)
                  .withUseSSAToPatchPrimaryResource(true);
              if (leaseNamespace != null) {
                o.withLeaderElectionConfiguration(
                    new LeaderElectionConfiguration("soko-operator-lock", leaseNamespace));
              }
            });
    ClusterObserver observer =
        new ClusterObserver(
            client, version != null ? version : ClusterObserver.serverVersion(client));
    reconciler =
        new StorageClusterReconciler(
            client,
            VersionsTable.load().withDefaultRegistry(imageRegistry),
            observer,
            new EventRecorder(client));
    this.clusterGauges = new StorageClusterGauges(client, registry);
    operator.register(reconciler, o -> o.withReconciliationMaxInterval(resync));
  }

  public void start() {
    operator.start();
    clusterGauges.start();
  }

  public boolean isRunning() {
    return operator.getRuntimeInfo().isStarted();
  }

  public boolean isHealthy() {
    return operator.getRuntimeInfo().allEventSourcesAreHealthy();
  }

  public long reconciles() {
    return reconciler.reconciles();
  }

  public long writeCalls() {
    return writes.writes();
  }

  public PrometheusMeterRegistry registry() {
    return registry;
  }

  public KubernetesClient client() {
    return client;
  }

  @Override
  public void close() {
    clusterGauges.close();
    operator.stop();
  }
}
