package dev.soko.operator.reconcile;

import static java.util.stream.Collectors.toSet;

import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.api.v1alpha1.StorageClusterStatus;
import dev.soko.api.v1alpha1.UninstallPolicy;
import dev.soko.operator.datatls.DataTlsCertificates;
import dev.soko.operator.model.ClusterFacts;
import dev.soko.operator.model.Compatibility;
import dev.soko.operator.model.DesiredState;
import dev.soko.operator.model.Names;
import dev.soko.operator.model.SpecValidator;
import dev.soko.operator.model.VersionsTable;
import dev.soko.operator.nodeloss.NodeLoss;
import dev.soko.operator.reconcile.apply.Applier;
import dev.soko.operator.reconcile.apply.CsiDriverReplacer;
import dev.soko.operator.reconcile.apply.EventRecorder;
import dev.soko.operator.reconcile.apply.GroupSnapshotClassReplacer;
import dev.soko.operator.reconcile.apply.Pruner;
import dev.soko.operator.reconcile.apply.ReportCleanup;
import dev.soko.operator.reconcile.apply.StorageClassReplacer;
import dev.soko.operator.reconcile.apply.UnclaimedSnapshots;
import dev.soko.operator.reconcile.apply.Uninstaller;
import dev.soko.operator.reconcile.kinds.ClusterCache;
import dev.soko.operator.reconcile.kinds.InformerCache;
import dev.soko.operator.reconcile.kinds.KindRegistry;
import dev.soko.operator.reconcile.kinds.OwnedEventSources;
import dev.soko.operator.reconcile.observe.CachedInventory;
import dev.soko.operator.reconcile.observe.ClusterObserver;
import dev.soko.operator.reconcile.observe.StorageNodeReports;
import dev.soko.operator.reconcile.status.PoolSummary;
import dev.soko.operator.reconcile.status.RolloutProgress;
import dev.soko.operator.reconcile.status.StatusAggregator;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.storage.CSIDriver;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.api.reconciler.Cleaner;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.ErrorStatusUpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.IndexerResourceCache;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * observe → validate → apply dependents → aggregate status. Collaborators come in by constructor.
 */
@ControllerConfiguration(name = "storagecluster", fieldManager = Applier.FIELD_MANAGER)
public final class StorageClusterReconciler
    implements Reconciler<StorageCluster>, Cleaner<StorageCluster> {
  private static final Logger LOG = LoggerFactory.getLogger(StorageClusterReconciler.class);

  private final VersionsTable table;
  private final ClusterObserver observer;
  private final Applier applier;
  private final Pruner pruner;
  private final Uninstaller uninstaller;
  private final CsiDriverReplacer csiDriverReplacer;
  private final GroupSnapshotClassReplacer groupSnapshotClassReplacer;
  private final StorageClassReplacer storageClassReplacer;
  private final EventRecorder events;
  private final KubernetesClient client;
  private final NodeLoss nodeLoss;
  private final RolloutProgress rollouts;
  private final ReportCleanup reportCleanup;
  private final UnclaimedSnapshots unclaimedSnapshots;
  private final DataTlsCertificates dataTls;
  private final StatusPublisher statuses;
  private final AtomicLong reconciles = new AtomicLong();
  private volatile IndexerResourceCache<StorageCluster> primaryCache;

  /** When the last retry failed, the next attempt comes this much later (without any event). */
  static final Duration AFTER_LAST_RETRY = Duration.ofSeconds(30);

  /**
   * @param client writes the status of a StorageCluster whose deletion is blocked
   * @param table the versions table the desired state is rendered from
   */
  public StorageClusterReconciler(
      KubernetesClient client, VersionsTable table, Collaborators collaborators) {
    this.client = client;
    this.table = table;
    this.observer = collaborators.observer();
    this.applier = collaborators.applier();
    this.pruner = collaborators.pruner();
    this.uninstaller = collaborators.uninstaller();
    this.csiDriverReplacer = collaborators.csiDriverReplacer();
    this.groupSnapshotClassReplacer = collaborators.groupSnapshotClassReplacer();
    this.storageClassReplacer = collaborators.storageClassReplacer();
    this.nodeLoss = collaborators.nodeLoss();
    this.reportCleanup = collaborators.reportCleanup();
    this.unclaimedSnapshots = collaborators.unclaimedSnapshots();
    this.rollouts = collaborators.rollouts();
    this.events = collaborators.events();
    this.dataTls = collaborators.dataTls();
    this.statuses = new StatusPublisher(table.release(), events);
  }

  @Override
  public List<EventSource<?, StorageCluster>> prepareEventSources(
      EventSourceContext<StorageCluster> context) {
    primaryCache = context.getPrimaryCache();
    return OwnedEventSources.create(context);
  }

  @Override
  public UpdateControl<StorageCluster> reconcile(StorageCluster sc, Context<StorageCluster> ctx) {
    reconciles.incrementAndGet();
    InformerCache cache = new InformerCache(ctx.eventSourceRetriever());
    List<String> problems = SpecValidator.problems(sc.getSpec());
    if (!problems.isEmpty()) {
      return statuses.finish(
          sc, statuses.failed(sc, "InvalidSpec", String.join("; ", problems)), ctx);
    }
    Optional<String> conflict =
        DriverNameConflicts.conflict(
            sc, ctx.getPrimaryCache().list().toList(), existingDriver(sc, cache));
    if (conflict.isPresent()) {
      return statuses.finish(sc, statuses.failed(sc, "DriverNameConflict", conflict.get()), ctx);
    }

    ClusterFacts facts = observer.facts(sc, cache);
    cache.follow(facts);
    Names names = Names.of(sc);
    Instant issuedAt = Instant.now();
    DataTlsCertificates.Desired certificates =
        dataTls.desired(names, ClusterObserver.dataTlsSecrets(names, cache), issuedAt);
    DesiredState desired = DesiredState.of(sc, table, facts, certificates.serving());
    List<HasMetadata> objects = applyDesired(sc, desired, certificates.secrets(), facts, cache);

    // Observe what the apply left: reads only.
    var workloads = observer.workloads(desired.names(), sc.getSpec().getDriver().getName(), cache);
    CachedInventory inventory = new CachedInventory(cache);
    StorageNodeReports.Observed reports =
        observer.reports(
            sc.getMetadata().getName(),
            ctx.getPrimaryCache().list().map(c -> c.getMetadata().getName()).collect(toSet()),
            inventory.nodeNames(),
            workloads,
            cache,
            Instant.now());

    // Apply what the observation calls for: every write of this reconcile but the status's.
    NodeLoss.Outcome loss = nodeLoss.reconcile(sc, inventory);
    reportCleanup.delete(
        reports.leftOver(), "its Node, its StorageCluster or its node plugin is gone");
    defaultClassNotice(sc, facts);
    Duration unclaimed =
        DesiredState.snapshotsEnabled(sc.getSpec(), facts)
            ? unclaimedSnapshots.check(sc, cache, Instant.now())
            : null;

    // Status: computed from what was observed and applied; written once, below, when it changed.
    PoolSummary.Result pools = PoolSummary.of(sc.getSpec(), reports, workloads.capacities());
    StatusAggregator aggregator =
        new StatusAggregator(sc, table.release(), StatusPublisher.now())
            .applied(desired, objects.size())
            .kubernetesVersion(facts.version().gitVersion())
            .compatibility(Compatibility.problems(sc.getSpec(), table, facts))
            .workloads(workloads, sc.getSpec().getController().getReplicas())
            .pools(pools)
            .orphanedVolumes(loss.report());
    RolloutProgress.Verdict rollout =
        rollouts.judge(sc.getMetadata().getName(), workloads, aggregator.nodes());
    StorageClusterStatus status = aggregator.stalled(rollout.message()).build();
    UpdateControl<StorageCluster> control = statuses.finish(sc, status, ctx);
    // Again when a deletion of orphaned volumes or a rollout deadline is due, a fresh report would
    // go stale, an imported snapshot content's grace ends, or a certificate is due for renewal: no
    // event tells that a driver stopped writing, that no node took a content, or that time passed.
    Duration next =
        earliest(
            earliest(
                earliest(earliest(loss.next(), rollout.recheck()), pools.recheck()), unclaimed),
            dataTls.recheck(certificates, issuedAt));
    return next == null ? control : control.rescheduleAfter(next);
  }

  /**
   * Apply: recreates what changed an immutable field, applies every desired object and the data
   * path's Secrets in the registry's order and prunes what is no longer desired. Returns the
   * applied objects in that order.
   */
  private List<HasMetadata> applyDesired(
      StorageCluster sc,
      DesiredState desired,
      List<Secret> secrets,
      ClusterFacts facts,
      ClusterCache cache) {
    String replaced = csiDriverReplacer.replaceIfImmutableChanged(desired.csiDriver(), cache);
    if (replaced != null) {
      events.normal(
          sc, "CSIDriverRecreated", "CSIDriver recreated for immutable changes: " + replaced);
    }
    if (desired.groupSnapshotClass() != null) {
      String recreated =
          groupSnapshotClassReplacer.replaceIfImmutableChanged(
              desired.groupSnapshotClass(), sc.getMetadata().getName(), cache);
      if (recreated != null) {
        events.normal(
            sc,
            "VolumeGroupSnapshotClassRecreated",
            "VolumeGroupSnapshotClass recreated for immutable changes: " + recreated);
      }
    }
    for (String recreated :
        storageClassReplacer.replaceIfImmutableChanged(
            desired.storageClasses(), sc.getMetadata().getName(), cache)) {
      events.normal(
          sc,
          "StorageClassRecreated",
          "StorageClass recreated for immutable changes: " + recreated);
    }
    List<HasMetadata> all = new ArrayList<>(desired.all());
    all.addAll(secrets);
    List<HasMetadata> objects = KindRegistry.inApplyOrder(all);
    int writes = 0;
    for (HasMetadata object : objects) {
      try {
        if (applier.apply(object, sc, cache)) {
          writes++;
        }
      } catch (KubernetesClientException e) {
        // Into status through updateErrorStatus; JOSDK retries with back-off.
        throw new ReconcileFailure.ApplyRefused(object, e);
      }
    }
    writes += pruner.prune(sc, objects, facts, cache);
    if (writes > 0) {
      LOG.info("{}: {} object(s) created, updated or deleted", sc.getMetadata().getName(), writes);
    }
    return objects;
  }

  private static Duration earliest(Duration a, Duration b) {
    return a == null ? b : b == null ? a : a.compareTo(b) <= 0 ? a : b;
  }

  /**
   * The error boundary: whatever made the reconcile fail (an apply the API server refused, a
   * missing API, a lost conflict) becomes Degraded with the server's message, a Warning event, and
   * never Ready. JOSDK retries with back-off; after its last attempt the reconcile is rescheduled,
   * so lifting the cause heals the installation without an event.
   */
  @Override
  public ErrorStatusUpdateControl<StorageCluster> updateErrorStatus(
      StorageCluster sc, Context<StorageCluster> ctx, Exception e) {
    if (ReconcileFailure.staleStorageCluster(e)) {
      return ErrorStatusUpdateControl.noStatusUpdate();
    }
    ReconcileFailure failure = ReconcileFailure.of(e);
    LOG.warn("{}: {}: {}", sc.getMetadata().getName(), failure.reason(), failure.message());
    StorageClusterStatus status = statuses.failed(sc, failure.reason(), failure.message());
    boolean last = ctx.getRetryInfo().map(r -> r.isLastAttempt()).orElse(true);
    ErrorStatusUpdateControl<StorageCluster> control = statuses.onError(sc, status);
    return last ? control.rescheduleAfter(AFTER_LAST_RETRY) : control;
  }

  /** Warn once (on the transition) when a requested default class defers to the user's choice. */
  private void defaultClassNotice(StorageCluster sc, ClusterFacts facts) {
    boolean wantsDefault =
        sc.getSpec().getStorageClasses().stream()
            .anyMatch(c -> Boolean.TRUE.equals(c.getDefaultClass()));
    if (wantsDefault
        && facts.foreignDefaultStorageClass() != null
        && sc.getStatus() != null
        && sc.getStatus().getObservedGeneration() != null
        && !Objects.equals(
            sc.getStatus().getObservedGeneration(), sc.getMetadata().getGeneration())) {
      events.normal(
          sc,
          "DefaultClassKept",
          "StorageClass "
              + facts.foreignDefaultStorageClass()
              + " is already the cluster default; Soko's class is not marked default");
    }
  }

  @Override
  public DeleteControl cleanup(StorageCluster sc, Context<StorageCluster> ctx) {
    if (sc.getSpec() == null) {
      // Stored before the CRD required a spec (or under such an old CRD): reconcile stopped at
      // InvalidSpec, so nothing was installed for it.
      return DeleteControl.defaultDelete();
    }
    InformerCache cache = new InformerCache(ctx.eventSourceRetriever());
    Collection<StorageCluster> all = ctx.getPrimaryCache().list().toList();
    if (DriverNameConflicts.conflict(sc, all, existingDriver(sc, cache)).isPresent()) {
      // A conflicting StorageCluster never created anything.
      return DeleteControl.defaultDelete();
    }
    String driver = sc.getSpec().getDriver().getName();
    List<String> volumes = ClusterObserver.volumesOf(driver, cache);
    if (!volumes.isEmpty() && sc.getSpec().getUninstallPolicy() != UninstallPolicy.Force) {
      String message =
          volumes.size()
              + " PersistentVolume(s) of driver "
              + driver
              + " still exist ("
              + String.join(", ", volumes.subList(0, Math.min(10, volumes.size())))
              + (volumes.size() > 10 ? ", ..." : "")
              + "); delete them or set spec.uninstallPolicy to Force";
      statuses.whileDeleting(sc, statuses.failed(sc, "DeletionBlocked", message), client);
      return DeleteControl.noFinalizerRemoval().rescheduleAfter(15_000);
    }
    ClusterFacts facts = observer.facts(sc, cache);
    // After a restart the first event may be the deletion: start the optional kinds' informers.
    cache.follow(facts);
    Uninstaller.Step step = uninstaller.uninstall(sc, facts, all, cache);
    if (!step.done()) {
      // The workloads are deleted; their pods still run sidecars that need the RBAC. A pod's
      // deletion is an event, so the next look usually comes sooner than the recheck.
      statuses.whileDeleting(sc, statuses.failed(sc, "Uninstalling", step.waitingFor()), client);
      return DeleteControl.noFinalizerRemoval().rescheduleAfter(step.recheck().toMillis());
    }
    rollouts.forget(sc.getMetadata().getName());
    // After the node plugins' pods, so that none is left to write again.
    reportCleanup.deleteAll(sc.getMetadata().getName(), cache);
    LOG.info("{}: uninstalled", sc.getMetadata().getName());
    return DeleteControl.defaultDelete();
  }

  private static CSIDriver existingDriver(StorageCluster sc, ClusterCache cache) {
    return ClusterObserver.csiDriver(cache, sc.getSpec().getDriver().getName());
  }

  /**
   * The StorageClusters in JOSDK's cache, the one watch on them: empty until the controller starts
   * (with leader election, until this replica leads).
   */
  public List<StorageCluster> cachedStorageClusters() {
    IndexerResourceCache<StorageCluster> c = primaryCache;
    return c == null ? List.of() : c.list().toList();
  }

  /** Reconcile calls since start (exported as a metric; tests use it to await a resync). */
  public long reconciles() {
    return reconciles.get();
  }
}
