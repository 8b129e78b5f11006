package dev.soko.operator.nodeloss;

import java.util.List;

/**
 * A VolumeSnapshotContent of the driver that belongs to a Node that is gone: the Node's
 * csi-snapshotter is the only one that would ever act on it, because the content is labelled with
 * that Node ({@link LostSnapshots#MANAGED_BY}), or because it is unlabelled and its source volume
 * lives on that Node (snapshot-controller labels a content only with a Node that exists when it
 * creates the content, so a snapshot asked for after the Node went is taken by nobody).
 *
 * @param uid the content's UID
 * @param node the Node that is gone
 * @param labelled whether the content carries the managed-by label (else: found by its volume)
 * @param taken whether the snapshot was taken (status.snapshotHandle set): its data is on the Node
 * @param deletionAsked the content is being deleted as a csi-snapshotter would act on: it has a
 *     deletionTimestamp and snapshot-controller marked it {@link LostSnapshots#BEING_DELETED} (its
 *     VolumeSnapshot is being deleted), or it is an imported content bound to no VolumeSnapshot
 *     (external-snapshotter's sidecar shouldDelete)
 * @param finalizers the content's finalizers as read
 * @param snapshot the bound VolumeSnapshot as namespace/name, null when the reference is empty
 * @param snapshotUid the VolumeSnapshot's UID from the reference, null when unset
 */
record LostSnapshot(
    String content,
    String uid,
    String node,
    boolean labelled,
    boolean taken,
    boolean deletionAsked,
    List<String> finalizers,
    String snapshot,
    String snapshotUid) {

  /** Whether release must remove the finalizer a Node's csi-snapshotter would have removed. */
  boolean heldBySnapshotter() {
    return finalizers.contains(LostSnapshots.CONTENT_FINALIZER);
  }
}
