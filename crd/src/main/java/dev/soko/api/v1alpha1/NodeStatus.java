package dev.soko.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.List;

/**
 * Node plugin pods wanted and ready, nodes whose CSINode lists the driver, and the nodes that serve
 * volumes (both). Counts, plus a bounded list of the nodes with a problem: the object does not grow
 * with the cluster.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record NodeStatus(
    @JsonPropertyDescription("Nodes that should run the node plugin.") Integer desired,
    @JsonPropertyDescription("Nodes whose node plugin pod is ready.") Integer ready,
    @JsonPropertyDescription("Nodes whose CSINode object lists the driver.") Integer registered,
    @JsonPropertyDescription(
            "Nodes that serve volumes: the node plugin pod is ready and the kubelet has registered"
                + " the driver.")
        Integer available,
    @JsonPropertyDescription(
            "Up to 10 nodes that do not serve volumes, with the reason; moreProblems counts the"
                + " rest.")
        List<NodeProblem> problems,
    @JsonPropertyDescription("Nodes with a problem beyond those listed in problems.")
        Integer moreProblems) {
  public NodeStatus(Integer desired, Integer ready, Integer registered) {
    this(desired, ready, registered, null, null, null);
  }
}
