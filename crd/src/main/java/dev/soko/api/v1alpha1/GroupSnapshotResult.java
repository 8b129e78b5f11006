package dev.soko.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import java.util.List;

/** A group snapshot the node took or described, as the controller's CSI answer needs it. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record GroupSnapshotResult(
    @JsonPropertyDescription("The group snapshot's id on its node.") @Required @Size(max = 128)
        String groupSnapshotId,
    @JsonPropertyDescription("When it was taken, RFC 3339.") @Required @Size(max = 64)
        String creationTime,
    @JsonPropertyDescription("Whether every member can be restored from now.") @Required
        Boolean readyToUse,
    @JsonPropertyDescription("One snapshot per source volume, in the order of the volumes.")
        @Required
        @Size(max = NodeRequestSpec.MAX_IDS)
        List<SnapshotResult> snapshots) {}
