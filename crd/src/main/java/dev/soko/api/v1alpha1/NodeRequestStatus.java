package dev.soko.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/** What the node did with the spec of one generation; written by the node's driver only. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
    value = "self.phase == 'Applied' || has(self.message)",
    message = "a request that was not applied says why in message")
public record NodeRequestStatus(
    @JsonPropertyDescription("The metadata.generation of the spec this status is about.")
        @Required
        @Min(1)
        Long observedGeneration,
    @JsonPropertyDescription(
            "Applied (done, and kept across restarts of the node's driver), Refused (the node"
                + " will not do it: bad parameters, unknown volume) or Failed (it could not, and"
                + " tries again).")
        @Required
        @Pattern(
            "^("
                + NodeRequestStatus.APPLIED
                + "|"
                + NodeRequestStatus.REFUSED
                + "|"
                + NodeRequestStatus.FAILED
                + ")$")
        String phase,
    @JsonPropertyDescription("Why the request is not Applied, one sentence.") @Size(max = 1024)
        String message,
    @JsonPropertyDescription(
            "Why a request was Refused, as the CSI code the controller answers with (e.g."
                + " NOT_FOUND); INVALID_ARGUMENT when absent.")
        @Pattern("^[A-Z_]{1,32}$")
        String reason,
    @JsonPropertyDescription("CreateSnapshot's snapshot, once Applied.") SnapshotResult snapshot,
    @JsonPropertyDescription(
            "CreateVolumeGroupSnapshot's and GetVolumeGroupSnapshot's group snapshot, once"
                + " Applied.")
        GroupSnapshotResult groupSnapshot,
    @JsonPropertyDescription("ExpandVolume's answer, once Applied.") ExpansionResult expansion) {
  public static final String APPLIED = "Applied";
  public static final String REFUSED = "Refused";
  public static final String FAILED = "Failed";
}
