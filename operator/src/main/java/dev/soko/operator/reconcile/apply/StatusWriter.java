package dev.soko.operator.reconcile.apply;

import dev.soko.api.v1alpha1.StorageCluster;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.event.ResourceID;

/**
 * Writes a StorageCluster's status as JOSDK's own status patch does (server-side apply of a
 * status-only object whose resourceVersion is an optimistic lock), and then puts what the API
 * server returned into JOSDK's cache of StorageClusters. JOSDK drops that answer: a reconcile that
 * ran right after (an event came in meanwhile, e.g. the DaemonSet's status after a pod's) read the
 * StorageCluster from before the patch, its own patch met 409 Conflict, and the change reached the
 * status only with JOSDK's retry, 2 s later.
 */
public final class StatusWriter {
  private StatusWriter() {}

  /**
   * @param patch name, the resourceVersion the status was computed from, and the status
   * @param current the StorageCluster this reconcile read
   */
  public static void write(
      StorageCluster patch, StorageCluster current, Context<StorageCluster> ctx) {
    StorageCluster written =
        ctx.getClient()
            .resources(StorageCluster.class)
            .resource(patch)
            .subresource("status")
            .patch(
                new PatchContext.Builder()
                    .withFieldManager(Applier.FIELD_MANAGER)
                    .withForce(true)
                    .withPatchType(PatchType.SERVER_SIDE_APPLY)
                    .build());
    ctx.eventSourceRetriever()
        .getControllerEventSource()
        .handleRecentResourceUpdate(ResourceID.fromResource(current), written, current);
  }
}
