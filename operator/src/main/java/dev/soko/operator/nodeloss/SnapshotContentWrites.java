package dev.soko.operator.nodeloss;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The reads and writes of VolumeSnapshotContents that node-loss handling does itself: the contents
 * labelled with gone Nodes (the operator's informer holds only unlabelled ones) and their release.
 * Every method throws {@link io.fabric8.kubernetes.client.KubernetesClientException} on a refused
 * call; the caller reports it and tries again on a later reconcile.
 */
class SnapshotContentWrites {
  static final ResourceDefinitionContext CONTENTS =
      new ResourceDefinitionContext.Builder()
          .withGroup("snapshot.storage.k8s.io")
          .withVersion("v1")
          .withKind("VolumeSnapshotContent")
          .withPlural("volumesnapshotcontents")
          .withNamespaced(false)
          .build();

  private final KubernetesClient client;

  SnapshotContentWrites(KubernetesClient client) {
    this.client = client;
  }

  /** The contents labelled with any of {@code nodes} (one list call; none when empty). */
  List<GenericKubernetesResource> managedBy(Set<String> nodes) {
    if (nodes.isEmpty()) {
      return List.of();
    }
    return client
        .genericKubernetesResources(CONTENTS)
        .withLabelSelector(
            LostSnapshots.MANAGED_BY + " in (" + String.join(",", new TreeSet<>(nodes)) + ")")
        .list()
        .getItems();
  }

  /**
   * Releases a content of a gone Node whose deletion was asked for ({@link
   * LostSnapshot#deletionAsked}): removes {@link LostSnapshots#CONTENT_FINALIZER}, which only that
   * Node's csi-snapshotter would remove (after deleting the snapshot on the Node with
   * deletionPolicy Delete, at once with Retain); the API server then deletes the content, and
   * snapshot-controller lets its VolumeSnapshot go.
   *
   * <p>Why removing it is safe: the snapshot's data lived in the Node's pool and went with it;
   * nothing else can delete it, and the finalizer would hold the content, and so the deletion of
   * its VolumeSnapshot, forever. The content itself is never deleted here: snapshot-controller does
   * that when its VolumeSnapshot is deleted, and a content deleted under a VolumeSnapshot that
   * stays is made again under the same name (measured: a loop of deletes and re-creations). Only
   * the UID that was read is touched: a content made again under the name is not.
   */
  void release(LostSnapshot s) {
    int i = s.finalizers().indexOf(LostSnapshots.CONTENT_FINALIZER);
    if (i < 0) {
      return;
    }
    // test-then-remove, with the UID: a list changed since it was read, or another object of the
    // name, fails the patch rather than losing the wrong finalizer.
    String path = "/metadata/finalizers/" + i;
    client
        .genericKubernetesResources(CONTENTS)
        .withName(s.content())
        .patch(
            PatchContext.of(PatchType.JSON),
            "[{\"op\":\"test\",\"path\":\"/metadata/uid\",\"value\":\""
                + s.uid()
                + "\"},{\"op\":\"test\",\"path\":\""
                + path
                + "\",\"value\":\""
                + LostSnapshots.CONTENT_FINALIZER
                + "\"},{\"op\":\"remove\",\"path\":\""
                + path
                + "\"}]");
  }
}
