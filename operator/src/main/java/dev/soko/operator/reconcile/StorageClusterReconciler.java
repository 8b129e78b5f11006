package dev.soko.operator.reconcile;

import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.api.v1alpha1.StorageClusterStatus;
import dev.soko.api.v1alpha1.UninstallPolicy;
import dev.soko.operator.model.ClusterFacts;
import dev.soko.operator.model.Compatibility;
import dev.soko.operator.model.DesiredState;
import dev.soko.operator.model.Names;
import dev.soko.operator.model.SpecValidator;
import dev.soko.operator.model.VersionsTable;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.reconciler.Cleaner;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
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
  private final CsiDriverReplacer csiDriverReplacer;
  private final EventRecorder events;
  private final KubernetesClient client;
  private final dev.soko.operator.nodeloss.NodeLoss nodeLoss;
  private final java.util.concurrent.atomic.AtomicLong reconciles =
      new java.util.concurrent.atomic.AtomicLong();

  public StorageClusterReconciler(
      KubernetesClient client,
      VersionsTable table,
      ClusterObserver observer,
      EventRecorder events) {
    this.client = client;
    this.table = table;
    this.observer = observer;
    this.applier = new Applier(client);
    this.pruner = new Pruner(client);
    this.csiDriverReplacer = new CsiDriverReplacer(client);
    this.events = events;
    this.nodeLoss =
        new dev.soko.operator.nodeloss.NodeLoss(client, events::normal, events::warning);
  }

  @Override
  public List<EventSource<?, StorageCluster>> prepareEventSources(
      EventSourceContext<StorageCluster> context) {
    List<EventSource<?, StorageCluster>> sources =
        new java.util.ArrayList<>(OwnedEventSources.create(context));
    sources.addAll(nodeLoss.eventSources(context));
    return sources;
  }

  @Override
  public UpdateControl<StorageCluster> reconcile(StorageCluster sc, Context<StorageCluster> ctx) {
    reconciles.incrementAndGet();
    List<String> problems = SpecValidator.problems(sc.getSpec());
    if (!problems.isEmpty()) {
      return finish(sc, failed(sc, "InvalidSpec", String.join("; ", problems)));
    }
    Optional<String> conflict =
        DriverNameConflicts.conflict(sc, ctx.getPrimaryCache().list().toList(), existingDriver(sc));
    if (conflict.isPresent()) {
      return finish(sc, failed(sc, "DriverNameConflict", conflict.get()));
    }

    ClusterFacts facts = observer.facts(sc);
    DesiredState desired = DesiredState.of(sc, table, facts);
    String replaced = csiDriverReplacer.replaceIfImmutableChanged(desired.csiDriver());
    if (replaced != null) {
      events.normal(
          sc, "CSIDriverRecreated", "CSIDriver recreated for immutable changes: " + replaced);
    }
    List<HasMetadata> objects = desired.all();
    int writes = 0;
    for (HasMetadata object : objects) {
      if (applier.apply(object, sc)) {
        writes++;
      }
    }
    writes += pruner.prune(sc, objects, facts);
    if (writes > 0) {
      LOG.info("{}: {} object(s) created, updated or deleted", sc.getMetadata().getName(), writes);
    }

    List<String> compatibility = Compatibility.problems(sc.getSpec(), table, facts);
    var workloads = observer.workloads(desired.names(), sc.getSpec().getDriver().getName());
    StorageClusterStatus status =
        StatusAggregator.aggregate(
            sc,
            StatusAggregator.Outcome.applied(),
            desired,
            facts.version().gitVersion(),
            compatibility,
            workloads,
            objects.size(),
            now());
    dev.soko.operator.nodeloss.NodeLoss.Outcome loss = nodeLoss.reconcile(sc);
    status.setOrphanedVolumes(loss.report());
    defaultClassNotice(sc, facts);
    return loss.reschedule(finish(sc, status));
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

  private StorageClusterStatus failed(StorageCluster sc, String reason, String message) {
    return StatusAggregator.aggregate(
        sc, StatusAggregator.Outcome.failed(reason, message), null, null, null, null, 0, now());
  }

  /** Patches status only when it changed; records an event when Ready or Degraded flips. */
  private UpdateControl<StorageCluster> finish(StorageCluster sc, StorageClusterStatus status) {
    if (status.equals(sc.getStatus())) {
      return UpdateControl.noUpdate();
    }
    transitionEvents(sc, sc.getStatus(), status);
    StorageCluster patch = new StorageCluster();
    patch.setMetadata(
        new io.fabric8.kubernetes.api.model.ObjectMetaBuilder()
            .withName(sc.getMetadata().getName())
            .withResourceVersion(sc.getMetadata().getResourceVersion())
            .build());
    patch.setStatus(status);
    return UpdateControl.patchStatus(patch);
  }

  private void transitionEvents(
      StorageCluster sc, StorageClusterStatus before, StorageClusterStatus after) {
    for (String type : List.of(Conditions.READY, Conditions.DEGRADED, Conditions.COMPATIBLE)) {
      Condition old = before == null ? null : Conditions.find(before.getConditions(), type);
      Condition now = Conditions.find(after.getConditions(), type);
      if (now == null) {
        continue;
      }
      boolean changed =
          old == null
              || !Objects.equals(old.getStatus(), now.getStatus())
              || !Objects.equals(old.getReason(), now.getReason());
      boolean bad =
          (type.equals(Conditions.DEGRADED) && "True".equals(now.getStatus()))
              || (type.equals(Conditions.COMPATIBLE) && "False".equals(now.getStatus()));
      if (changed && (bad || type.equals(Conditions.READY) && "True".equals(now.getStatus()))) {
        if (bad) {
          events.warning(sc, now.getReason(), now.getMessage());
        } else {
          events.normal(sc, now.getReason(), now.getMessage());
        }
      }
    }
  }

  @Override
  public DeleteControl cleanup(StorageCluster sc, Context<StorageCluster> ctx) {
    Collection<StorageCluster> all = ctx.getPrimaryCache().list().toList();
    if (DriverNameConflicts.conflict(sc, all, existingDriver(sc)).isPresent()) {
      // A conflicting StorageCluster never created anything.
      return DeleteControl.defaultDelete();
    }
    String driver = sc.getSpec().getDriver().getName();
    List<String> volumes = observer.volumesOf(driver);
    if (!volumes.isEmpty() && sc.getSpec().getUninstallPolicy() != UninstallPolicy.Force) {
      String message =
          volumes.size()
              + " PersistentVolume(s) of driver "
              + driver
              + " still exist ("
              + String.join(", ", volumes.subList(0, Math.min(10, volumes.size())))
              + (volumes.size() > 10 ? ", ..." : "")
              + "); delete them or set spec.uninstallPolicy to Force";
      StorageClusterStatus status = failed(sc, "DeletionBlocked", message);
      if (!status.equals(sc.getStatus())) {
        transitionEvents(sc, sc.getStatus(), status);
        StorageCluster copy =
            client.resources(StorageCluster.class).withName(sc.getMetadata().getName()).get();
        if (copy != null) {
          copy.setStatus(status);
          client.resource(copy).patchStatus();
        }
      }
      return DeleteControl.noFinalizerRemoval().rescheduleAfter(15_000);
    }
    ClusterFacts facts = observer.facts(sc);
    pruner.deleteAll(sc, facts, all);
    LOG.info("{}: uninstalled", sc.getMetadata().getName());
    return DeleteControl.defaultDelete();
  }

  private io.fabric8.kubernetes.api.model.storage.CSIDriver existingDriver(StorageCluster sc) {
    return client.storage().v1().csiDrivers().withName(sc.getSpec().getDriver().getName()).get();
  }

  /** Reconcile calls since start (exported as a metric; tests use it to await a resync). */
  public long reconciles() {
    return reconciles.get();
  }

  private static String now() {
    return Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
  }

  static String labelSelector() {
    return Names.LABEL_CLUSTER;
  }
}
