package dev.soko.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** Node plugin pods wanted and ready, and nodes whose CSINode lists the driver. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record NodeStatus(
    @JsonPropertyDescription("Nodes that should run the node plugin.") Integer desired,
    @JsonPropertyDescription("Nodes whose node plugin pod is ready.") Integer ready,
    @JsonPropertyDescription("Nodes whose CSINode object lists the driver.") Integer registered) {}
