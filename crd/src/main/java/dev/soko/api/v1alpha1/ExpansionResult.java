package dev.soko.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Required;

/** What the node made of a volume's growth, as ControllerExpandVolume's answer needs it. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ExpansionResult(
    @JsonPropertyDescription("The volume's capacity now, in bytes.") @Required @Min(0)
        Long capacityBytes,
    @JsonPropertyDescription(
            "True when the filesystem is still to be grown by the kubelet's NodeExpandVolume"
                + " (the node could not grow it at once); false when nothing is left to do.")
        @Required
        Boolean nodeExpansionRequired) {}
