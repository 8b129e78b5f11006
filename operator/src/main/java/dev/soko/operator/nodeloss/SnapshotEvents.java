package dev.soko.operator.nodeloss;

import dev.soko.api.v1alpha1.StorageCluster;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Instant;
import java.util.List;

/**
 * The events of node-loss handling for snapshots: a Warning on the VolumeSnapshot whose content
 * belongs to a gone Node (where its user looks: kubectl describe volumesnapshot), and on the
 * StorageCluster the releases done and those that failed.
 */
final class SnapshotEvents {
  static final String SNAPSHOT_NODE_LOST = "SnapshotNodeLost";
  static final String RELEASED = "SnapshotContentsReleased";
  static final String RELEASE_FAILED = "SnapshotContentReleaseFailed";

  private final NodeLoss.ObjectEventSink onObject;
  private final NodeLoss.EventSink warning;

  SnapshotEvents(NodeLoss.ObjectEventSink onObject, NodeLoss.EventSink warning) {
    this.onObject = onObject;
    this.warning = warning;
  }

  /**
   * @param releaseAt from when the content is released once its VolumeSnapshot is being deleted;
   *     null with policy Retain
   */
  void lost(StorageCluster sc, Policy policy, LostSnapshot s, Instant releaseAt) {
    if (s.snapshot() == null) {
      return;
    }
    String[] ns = s.snapshot().split("/", 2);
    HasMetadata snapshot =
        new GenericKubernetesResourceBuilder()
            .withApiVersion("snapshot.storage.k8s.io/v1")
            .withKind("VolumeSnapshot")
            .withNewMetadata()
            .withNamespace(ns[0])
            .withName(ns[1])
            .withUid(s.snapshotUid())
            .endMetadata()
            .build();
    onObject.record(snapshot, SNAPSHOT_NODE_LOST, message(sc, policy, s, releaseAt));
  }

  static String message(StorageCluster sc, Policy policy, LostSnapshot s, Instant releaseAt) {
    String node = s.node();
    StringBuilder m = new StringBuilder("Node ").append(node).append(" is gone");
    if (s.taken()) {
      m.append(" and this snapshot's data is on it (VolumeSnapshotContent ")
          .append(s.content())
          .append("): it cannot be restored unless ")
          .append(node)
          .append(" comes back.");
    } else {
      m.append(": the volume this snapshot is taken from lived there, so the snapshot cannot be")
          .append(" taken (VolumeSnapshotContent ")
          .append(s.content())
          .append(" waits for ")
          .append(node)
          .append("'s csi-snapshotter).");
      if (!s.labelled()) {
        m.append(" It was asked for after ")
            .append(node)
            .append(" went, so no node will ever take it, even if ")
            .append(node)
            .append(" returns: delete it and take a new snapshot then.");
      }
    }
    m.append(" Delete this VolumeSnapshot");
    if (s.labelled()) {
      m.append(", or bring ").append(node).append(" back under its name with its pool");
    }
    m.append(". ").append(policy.describe()).append(" (StorageCluster ");
    m.append(sc.getMetadata().getName()).append("): ");
    if (releaseAt != null) {
      return m.append("from ")
          .append(releaseAt)
          .append(" on, unless ")
          .append(node)
          .append(" comes back first, the operator takes its content's finalizer ")
          .append(LostSnapshots.CONTENT_FINALIZER)
          .append(" off once this VolumeSnapshot is being deleted, so that the deletion completes.")
          .toString();
    }
    return m.append("nothing is released; deleting this VolumeSnapshot waits until its content's")
        .append(" finalizer ")
        .append(LostSnapshots.CONTENT_FINALIZER)
        .append(" is removed, which only ")
        .append(node)
        .append("'s csi-snapshotter does (or an administrator, by hand; see docs/moving-data.md).")
        .toString();
  }

  void released(StorageCluster sc, Policy policy, String node, List<String> contents) {
    warning.record(
        sc,
        RELEASED,
        "Released VolumeSnapshotContent(s) "
            + Events.bounded(contents)
            + " of Node "
            + node
            + ", gone for longer than "
            + Policy.format(policy.deleteAfter())
            + " ("
            + policy.describe()
            + "): their VolumeSnapshots were being deleted, and the finalizer only that Node's"
            + " csi-snapshotter would have removed is removed, so the deletions complete.");
  }

  void failed(StorageCluster sc, LostSnapshot s, KubernetesClientException e) {
    warning.record(
        sc,
        RELEASE_FAILED,
        "Could not release VolumeSnapshotContent "
            + s.content()
            + " of Node "
            + s.node()
            + " (retrying): "
            + e.getMessage());
  }
}
