package dev.soko.operator.reconcile;

import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.api.v1alpha1.StorageClusterStatus;
import dev.soko.operator.reconcile.apply.EventRecorder;
import dev.soko.operator.reconcile.apply.StatusWriter;
import dev.soko.operator.reconcile.status.Conditions;
import dev.soko.operator.reconcile.status.StatusAggregator;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ErrorStatusUpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Objects;

/**
 * Writes a StorageCluster's status, the reconciler's one way to: only when it differs from the
 * stored one, as a status-only object, with an event when Ready, Degraded or Compatible flips. The
 * three paths that end a reconcile (done, failed, deletion blocked) each have their method here.
 */
final class StatusPublisher {
  private final String release;
  private final EventRecorder events;

  StatusPublisher(String release, EventRecorder events) {
    this.release = release;
    this.events = events;
  }

  /** The status of a reconcile that stopped at {@code reason}: Degraded, never Ready. */
  StorageClusterStatus failed(StorageCluster sc, String reason, String message) {
    return new StatusAggregator(sc, release, now()).error(reason, message).build();
  }

  /**
   * Patches status only when it changed, and caches the result ({@link StatusWriter}); records an
   * event when Ready or Degraded flips.
   */
  UpdateControl<StorageCluster> finish(
      StorageCluster sc, StorageClusterStatus status, Context<StorageCluster> ctx) {
    if (!StatusAggregator.same(status, sc.getStatus())) {
      transitionEvents(sc, sc.getStatus(), status);
      StatusWriter.write(statusPatch(sc, status), sc, ctx);
    }
    return UpdateControl.noUpdate();
  }

  /** After a failed reconcile: JOSDK patches the status, when it changed. */
  ErrorStatusUpdateControl<StorageCluster> onError(StorageCluster sc, StorageClusterStatus status) {
    if (StatusAggregator.same(status, sc.getStatus())) {
      return ErrorStatusUpdateControl.noStatusUpdate();
    }
    transitionEvents(sc, sc.getStatus(), status);
    return ErrorStatusUpdateControl.patchStatus(statusPatch(sc, status));
  }

  /**
   * While a deletion waits (cleanup has no status control of its own): patched on a fresh copy,
   * when it changed.
   */
  void whileDeleting(StorageCluster sc, StorageClusterStatus status, KubernetesClient client) {
    if (StatusAggregator.same(status, sc.getStatus())) {
      return;
    }
    transitionEvents(sc, sc.getStatus(), status);
    StorageCluster copy =
        client.resources(StorageCluster.class).withName(sc.getMetadata().getName()).get();
    if (copy != null) {
      copy.setStatus(status);
      client.resource(copy).patchStatus();
    }
  }

  /** A status-only object: name, resourceVersion (optimistic lock) and status. */
  private static StorageCluster statusPatch(StorageCluster sc, StorageClusterStatus status) {
    StorageCluster patch = new StorageCluster();
    patch.setMetadata(
        new ObjectMetaBuilder()
            .withName(sc.getMetadata().getName())
            .withResourceVersion(sc.getMetadata().getResourceVersion())
            .build());
    patch.setStatus(status);
    return patch;
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

  static String now() {
    return Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
  }
}
