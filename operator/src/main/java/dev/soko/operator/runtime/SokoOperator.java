package dev.soko.operator.runtime;

import dev.soko.operator.datatls.DataTlsCertificates;
import dev.soko.operator.model.KubernetesVersion;
import dev.soko.operator.model.VersionsTable;
import dev.soko.operator.nodeloss.NodeLoss;
import dev.soko.operator.reconcile.Collaborators;
import dev.soko.operator.reconcile.StorageClusterReconciler;
import dev.soko.operator.reconcile.apply.Applier;
import dev.soko.operator.reconcile.apply.CsiDriverReplacer;
import dev.soko.operator.reconcile.apply.EventRecorder;
import dev.soko.operator.reconcile.apply.GroupSnapshotClassReplacer;
import dev.soko.operator.reconcile.apply.Pruner;
import dev.soko.operator.reconcile.apply.ReportCleanup;
import dev.soko.operator.reconcile.apply.StorageClassReplacer;
import dev.soko.operator.reconcile.apply.UnclaimedSnapshots;
import dev.soko.operator.reconcile.apply.Uninstaller;
import dev.soko.operator.reconcile.observe.ClusterObserver;
import dev.soko.operator.reconcile.status.RolloutProgress;
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
import java.time.Instant;
import java.util.function.Supplier;

/** Wires the operator in plain Java: client, observer, reconciler, metrics, leader election. */
public final class SokoOperator implements AutoCloseable {
  private final KubernetesClient client;
  private final RequestCounter calls = new RequestCounter();
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
   * @param rolloutDeadline how long a node plugin rollout may make no progress before the
   *     StorageCluster is Degraded with reason RolloutStalled
   */
  public SokoOperator(
      Config config,
      String leaseNamespace,
      Supplier<KubernetesVersion> version,
      String imageRegistry,
      Duration resync,
      Duration rolloutDeadline) {
    this.client =
        new KubernetesClientBuilder()
            .withConfig(config)
            .withHttpClientBuilderConsumer(b -> b.addOrReplaceInterceptor("soko-requests", calls))
            .build();
    FunctionCounter.builder("soko.operator.api.writes", calls, RequestCounter::writes)
        .description("Write calls (non-GET, Leases excepted) sent to the API server")
        .register(registry);
    FunctionCounter.builder("soko.operator.api.requests", calls, RequestCounter::requests)
        .description("Calls sent to the API server (watches and leader-election leases excepted)")
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
    VersionsTable table = VersionsTable.load().withDefaultRegistry(imageRegistry);
    ClusterObserver observer =
        new ClusterObserver(
            client,
            version != null ? version : ClusterObserver.serverVersion(client, resync),
            table,
            resync);
    reconciler =
        new StorageClusterReconciler(
            client, table, collaborators(client, observer, rolloutDeadline, resync));
    this.clusterGauges = new StorageClusterGauges(reconciler::cachedStorageClusters, registry);
    operator.register(reconciler, o -> o.withReconciliationMaxInterval(resync));
  }

  /** Every collaborator of the reconciler, built here and nowhere else. */
  private static Collaborators collaborators(
      KubernetesClient client,
      ClusterObserver observer,
      Duration rolloutDeadline,
      Duration resync) {
    EventRecorder events = new EventRecorder(client);
    Pruner pruner = new Pruner(client);
    return new Collaborators(
        observer,
        new Applier(client),
        pruner,
        new Uninstaller(pruner, Uninstaller.BOUND, Instant::now),
        new CsiDriverReplacer(client),
        new GroupSnapshotClassReplacer(client),
        new StorageClassReplacer(client),
        new NodeLoss(client, events::normal, events::warning, events::warningOn),
        new ReportCleanup(client),
        new UnclaimedSnapshots(events::warningOn),
        new RolloutProgress(rolloutDeadline, Instant::now),
        events,
        new DataTlsCertificates(resync));
  }

  public void start() {
    operator.start();
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
    return calls.writes();
  }

  /** Calls to the API server since start, watches and leader-election leases excepted. */
  public long apiCalls() {
    return calls.requests();
  }

  public PrometheusMeterRegistry registry() {
    return registry;
  }

  /** The Prometheus text of every metric, the StorageCluster gauges read from the cache now. */
  public String scrape() {
    clusterGauges.refresh();
    return registry.scrape();
  }

  public KubernetesClient client() {
    return client;
  }

  @Override
  public void close() {
    operator.stop();
  }
}
