package dev.soko.driver.csi;

import dev.soko.driver.volume.NodeGroupId;
import dev.soko.driver.volume.SpanningGroupId;
import dev.soko.driver.volume.StorageException;
import java.util.Optional;

/**
 * How a process shows group snapshot IDs on its CSI face. In a cluster, groups are taken through
 * the controller, which answers each in the {@link NodeGroupId} form; csi-snapshotter copies the
 * group_snapshot_id a node's ListSnapshots answers into the member's VolumeSnapshotContent, and the
 * snapshot controller finds the member's group by it, so a node in a cluster shows its groups in
 * that form too ({@link #onNode}), and takes IDs in either form. Elsewhere an ID is shown as the
 * records keep it ({@link #AS_KEPT}); so is every ID the controller answers, which the node's
 * answer built.
 */
public final class GroupIds {
  public static final GroupIds AS_KEPT = new GroupIds(Optional.empty());

  private final Optional<String> node;

  private GroupIds(Optional<String> node) {
    this.node = node;
  }

  /** The IDs of the node called {@code node} in a cluster. */
  public static GroupIds onNode(String node) {
    return new GroupIds(Optional.of(node));
  }

  /** {@code keptId} as this process shows it; an empty ID (no group) stays empty. */
  String shown(String keptId) {
    if (keptId.contains(NodeGroupId.AT)) {
      return keptId; // a group across nodes, shown by its whole ID already
    }
    return node.filter(n -> !keptId.isEmpty())
        .map(n -> new NodeGroupId(keptId, n).id())
        .orElse(keptId);
  }

  /**
   * The ID the records keep for {@code shownId}; NOT_FOUND for a group of another node, which this
   * one cannot hold.
   */
  String kept(String shownId) {
    if (node.isEmpty()) {
      return shownId;
    }
    if (SpanningGroupId.tryParse(shownId).isPresent()) {
      return shownId; // the engine finds its own part of a group across nodes
    }
    Optional<NodeGroupId> parsed = NodeGroupId.tryParse(shownId);
    if (parsed.isEmpty()) {
      return shownId;
    }
    if (!parsed.get().node().equals(node.get())) {
      throw StorageException.notFound(
          "group snapshot %s is on node %s, not on this node %s",
          shownId, parsed.get().node(), node.get());
    }
    return parsed.get().nodeId();
  }
}
