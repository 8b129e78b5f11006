package dev.soko.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;

/** A snapshot the node took, as the controller's CSI answer needs it. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record SnapshotResult(
    @JsonPropertyDescription("The snapshot's id on its node.") @Required @Size(max = 128)
        String snapshotId,
    @JsonPropertyDescription("The volume it is a snapshot of.") @Required @Size(max = 128)
        String sourceVolumeId,
    @JsonPropertyDescription("The size of a volume restored from it.") @Required @Min(0)
        Long sizeBytes,
    @JsonPropertyDescription("When it was taken, RFC 3339.") @Required @Size(max = 64)
        String creationTime,
    @JsonPropertyDescription("Whether a volume can be restored from it now.") @Required
        Boolean readyToUse) {}
