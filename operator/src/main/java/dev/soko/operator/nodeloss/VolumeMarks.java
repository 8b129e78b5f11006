package dev.soko.operator.nodeloss;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.time.Instant;
import java.util.List;

/**
 * The writes of the Delete policy: the mark on a PV, and deleting an orphan's claim and volume.
 * Every method throws {@link io.fabric8.kubernetes.client.KubernetesClientException} on a refused
 * write; the caller reports it and tries again on a later reconcile.
 */
class VolumeMarks {
  /**
   * When the operator first saw the PV's Node missing, RFC 3339. It lives on the PV because the
   * Node is gone (a deleted Node leaves no object with a deletion time behind) and an operator
   * restart must not restart the clock; removing it cancels the deletion.
   */
  static final String MISSING_SINCE = "soko.dev/node-missing-since";

  /** The finalizer the external-provisioner puts on the PVs it provisions. */
  static final String PROVISIONER_FINALIZER = "external-provisioner.volume.kubernetes.io/finalizer";

  private final KubernetesClient client;

  VolumeMarks(KubernetesClient client) {
    this.client = client;
  }

  void mark(String pv, Instant since) {
    mergePatch(
        pv, "{\"metadata\":{\"annotations\":{\"" + MISSING_SINCE + "\":\"" + since + "\"}}}");
  }

  void unmark(String pv) {
    mergePatch(pv, "{\"metadata\":{\"annotations\":{\"" + MISSING_SINCE + "\":null}}}");
  }

  /**
   * Deletes the claim bound to the orphan (only the very claim the PV's claimRef names: same UID,
   * bound to this PV), then the PV, then removes the external-provisioner's finalizer from it.
   *
   * <p>Why removing that finalizer is safe: it is there so that the provisioner calls DeleteVolume
   * before the PV object goes. Soko provisions with {@code --node-deployment}: only the provisioner
   * on the volume's own node handles it, and that node is gone, so the finalizer would hold the PV
   * forever. The data lived in that node's pool and went with the node; nothing else can free it.
   * The PV is deleted first, so a PV that a returned node could still use is never left without its
   * finalizer while it is not being deleted. {@code kubernetes.io/pv-protection} stays: the
   * controller-manager drops it once the claim is gone.
   *
   * @return what was deleted, for the event
   */
  String delete(Orphan orphan, PersistentVolume cached) {
    StringBuilder done = new StringBuilder();
    if (orphan.claim() != null && !orphan.deleting()) {
      String[] ns = orphan.claim().split("/", 2);
      PersistentVolumeClaim pvc =
          client.persistentVolumeClaims().inNamespace(ns[0]).withName(ns[1]).get();
      if (pvc != null
          && pvc.getMetadata().getDeletionTimestamp() == null
          && (orphan.claimUid() == null || orphan.claimUid().equals(pvc.getMetadata().getUid()))
          && orphan.pv().equals(pvc.getSpec().getVolumeName())) {
        client
            .persistentVolumeClaims()
            .inNamespace(ns[0])
            .withName(ns[1])
            .lockResourceVersion(pvc.getMetadata().getResourceVersion())
            .delete();
        done.append("claim ").append(orphan.claim()).append(" and ");
      }
    }
    if (!orphan.deleting()) {
      client.persistentVolumes().withName(orphan.pv()).delete();
    }
    done.append("PersistentVolume ").append(orphan.pv());
    List<String> finalizers = cached.getMetadata().getFinalizers();
    int i = finalizers == null ? -1 : finalizers.indexOf(PROVISIONER_FINALIZER);
    if (i >= 0) {
      // test-then-remove: a list changed since the cache saw it fails the patch, not the wrong
      // finalizer.
      String path = "/metadata/finalizers/" + i;
      client
          .persistentVolumes()
          .withName(orphan.pv())
          .patch(
              PatchContext.of(PatchType.JSON),
              "[{\"op\":\"test\",\"path\":\""
                  + path
                  + "\",\"value\":\""
                  + PROVISIONER_FINALIZER
                  + "\"},{\"op\":\"remove\",\"path\":\""
                  + path
                  + "\"}]");
    }
    return done.toString();
  }

  private void mergePatch(String pv, String patch) {
    client.persistentVolumes().withName(pv).patch(PatchContext.of(PatchType.JSON_MERGE), patch);
  }
}
