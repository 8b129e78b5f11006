package dev.soko.operator.nodeloss;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Which VolumeSnapshotContents of one driver belong to Nodes that are gone (pure). */
final class LostSnapshots {
  /**
   * The label snapshot-controller (--enable-distributed-snapshotting) gives a content: the Node
   * whose csi-snapshotter (--node-deployment) takes it. No other snapshotter ever acts on it.
   */
  static final String MANAGED_BY = "snapshot.storage.kubernetes.io/managed-by";

  /**
   * The finalizer snapshot-controller puts on every content it binds, and that only a
   * csi-snapshotter removes (external-snapshotter pkg/utils VolumeSnapshotContentFinalizer, removed
   * by the sidecar's removeContentFinalizer once the content is being deleted and its snapshot is
   * deleted or retained).
   */
  static final String CONTENT_FINALIZER =
      "snapshot.storage.kubernetes.io/volumesnapshotcontent-bound-protection";

  /**
   * The annotation snapshot-controller puts on a content when its VolumeSnapshot is being deleted,
   * before it deletes the content (deletionPolicy Delete): what tells a csi-snapshotter to act.
   */
  static final String BEING_DELETED = "snapshot.storage.kubernetes.io/volumesnapshot-being-deleted";

  private LostSnapshots() {}

  /**
   * @param existingNodes names of the Nodes that exist
   * @param orphans the driver's PVs whose Nodes are gone
   * @param volumes the driver's PVs (to find an unlabelled content's volume by its handle)
   * @param contents VolumeSnapshotContents of any driver, labelled or not
   * @return the contents of {@code driver} that belong to a gone Node, sorted by name
   */
  static List<LostSnapshot> find(
      String driver,
      Set<String> existingNodes,
      List<Orphan> orphans,
      Collection<PersistentVolume> volumes,
      Collection<GenericKubernetesResource> contents) {
    Map<String, String> lostNodeOfPv = new HashMap<>();
    orphans.forEach(o -> lostNodeOfPv.put(o.pv(), o.node()));
    Map<String, String> lostNodeOfHandle = new HashMap<>();
    for (PersistentVolume pv : volumes) {
      String node = lostNodeOfPv.get(pv.getMetadata().getName());
      if (node != null && OrphanFinder.ofDriver(pv, driver)) {
        lostNodeOfHandle.put(pv.getSpec().getCsi().getVolumeHandle(), node);
      }
    }
    List<LostSnapshot> out = new ArrayList<>();
    for (GenericKubernetesResource c : contents) {
      if (!driver.equals(text(c, "spec", "driver")) || c.getMetadata().getUid() == null) {
        continue;
      }
      Map<String, String> labels = c.getMetadata().getLabels();
      String managedBy = labels == null ? null : labels.get(MANAGED_BY);
      String node;
      if (managedBy != null) {
        node = existingNodes.contains(managedBy) ? null : managedBy;
      } else {
        // Unlabelled: only a dynamic content's volume tells its Node (an imported one is
        // UnclaimedSnapshots' concern: its handle does not say where it lives).
        String handle = text(c, "spec", "source", "volumeHandle");
        node = handle == null ? null : lostNodeOfHandle.get(handle);
      }
      if (node != null) {
        out.add(lost(c, node, managedBy != null));
      }
    }
    out.sort(Comparator.comparing(LostSnapshot::content));
    return out;
  }

  private static LostSnapshot lost(GenericKubernetesResource c, String node, boolean labelled) {
    Map<String, String> annotations = c.getMetadata().getAnnotations();
    boolean unboundImport =
        text(c, "spec", "source", "snapshotHandle") != null
            && text(c, "spec", "volumeSnapshotRef", "uid") == null;
    boolean deletionAsked =
        c.getMetadata().getDeletionTimestamp() != null
            && (unboundImport || (annotations != null && annotations.containsKey(BEING_DELETED)));
    String ns = text(c, "spec", "volumeSnapshotRef", "namespace");
    String name = text(c, "spec", "volumeSnapshotRef", "name");
    List<String> finalizers = c.getMetadata().getFinalizers();
    return new LostSnapshot(
        c.getMetadata().getName(),
        c.getMetadata().getUid(),
        node,
        labelled,
        text(c, "status", "snapshotHandle") != null,
        deletionAsked,
        finalizers == null ? List.of() : List.copyOf(finalizers),
        ns == null || name == null ? null : ns + "/" + name,
        text(c, "spec", "volumeSnapshotRef", "uid"));
  }

  private static String text(GenericKubernetesResource c, Object... path) {
    Object value = c.get(path);
    return value instanceof String s && !s.isEmpty() ? s : null;
  }
}
