package dev.soko.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.crd.generator.annotation.SelectableField;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import java.util.Map;

/** What the node is asked to do; written by the controller-mode driver only. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record NodeRequestSpec(
    @JsonPropertyDescription("The node that owns the volume (also in the soko.dev/node label).")
        @Required
        @Size(max = 63)
        @SelectableField
        String node,
    @JsonPropertyDescription("The CSI volume id the request is about.")
        @Required
        @Size(min = 1, max = 128)
        String volumeId,
    @JsonPropertyDescription("What to do: ModifyVolume (apply mutable parameters).") @Required
        NodeOperation operation,
    @JsonPropertyDescription(
            "The operation's parameters: for ModifyVolume the volume's mutable parameters, whole"
                + " (a parameter left out goes back to its default).")
        @Size(max = MAX_PARAMETERS)
        Map<String, String> parameters) {
  public static final int MAX_PARAMETERS = 32;
}
