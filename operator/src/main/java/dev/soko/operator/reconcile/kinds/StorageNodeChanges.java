package dev.soko.operator.reconcile.kinds;

import dev.soko.api.v1alpha1.StorageNode;
import dev.soko.api.v1alpha1.StorageNodePool;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Which rewrites of a node driver's StorageNode report reconcile ({@link
 * Kind.Reconciles#REPORT_CHANGE}), and the StorageCluster a report belongs to.
 */
public final class StorageNodeChanges {
  private StorageNodeChanges() {}

  /**
   * Whether a rewrite of a report can change what the status shows at once: a pool's state or
   * message, the pools listed, volume counts, the node or the owner. Physical readings alone (and
   * the time) change with every write of every node; they wait for the next reconcile.
   */
  public static boolean changesStatus(StorageNode now, StorageNode before) {
    return !Objects.equals(shape(now), shape(before)) || !Objects.equals(owner(now), owner(before));
  }

  private static List<Object> shape(StorageNode r) {
    List<Object> shape = new ArrayList<>();
    shape.add(r.getNode());
    shape.add(r.getVolumes());
    shape.add(r.getMore());
    if (r.getPools() != null) {
      for (StorageNodePool p : r.getPools()) {
        shape.add(List.of(p.name(), p.state(), String.valueOf(p.message()), "" + p.volumes()));
      }
    }
    return shape;
  }

  /** The StorageCluster named in the report's label; null without one. */
  public static String owner(StorageNode r) {
    Map<String, String> labels = r.getMetadata() == null ? null : r.getMetadata().getLabels();
    return labels == null ? null : labels.get(StorageNode.LABEL_CLUSTER);
  }
}
