package dev.soko.driver.csi;

import csi.v1.Csi;
import java.util.List;
import java.util.Map;

/**
 * The one topology segment a node-local volume has: the node that owns its pool. The key is the
 * label the node-driver-registrar puts on the Node, so the scheduler can match volumes to nodes.
 */
public final class Topology {
  public static final String NODE_KEY = "topology.soko.dev/node";

  private final Csi.Topology segment;
  private final String nodeId;

  public Topology(String nodeId) {
    this.nodeId = nodeId;
    this.segment = Csi.Topology.newBuilder().putSegments(NODE_KEY, nodeId).build();
  }

  public Csi.Topology segment() {
    return segment;
  }

  /** True when a CO's segment names this node; other keys than ours can never be satisfied. */
  boolean matches(Csi.Topology topology) {
    Map<String, String> segments = topology.getSegmentsMap();
    return segments.size() == 1 && nodeId.equals(segments.get(NODE_KEY));
  }

  /**
   * Whether a CreateVolume may place the volume here. The spec makes {@code requisite} binding and
   * {@code preferred} a hint that must be a subset of requisite; with no requisite any node goes,
   * but a non-empty preferred list that excludes us still means "not here" in a distributed
   * deployment where each node's provisioner only handles its own volumes.
   */
  boolean accepts(Csi.TopologyRequirement requirement) {
    List<Csi.Topology> requisite = requirement.getRequisiteList();
    if (!requisite.isEmpty()) {
      return requisite.stream().anyMatch(this::matches);
    }
    List<Csi.Topology> preferred = requirement.getPreferredList();
    return preferred.isEmpty() || preferred.stream().anyMatch(this::matches);
  }
}
