package dev.soko.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** Why one node does not serve volumes. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record NodeProblem(
    @JsonPropertyDescription("The node.") String node,
    @JsonPropertyDescription(
            "A container's waiting or terminated reason (CrashLoopBackOff, ImagePullBackOff, ...),"
                + " ContainerNotReady, Pending, or NotRegistered when the pod is ready but the"
                + " kubelet has not registered the driver.")
        String reason,
    @JsonPropertyDescription("The node plugin container the reason is about, when one is.")
        String container) {}
