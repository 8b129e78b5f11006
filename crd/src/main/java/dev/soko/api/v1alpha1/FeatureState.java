package dev.soko.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/**
 * Whether an optional feature runs, with a machine-readable reason and a sentence for people.
 *
 * @param running true when the feature's components are deployed
 * @param reason CamelCase, e.g. {@code Running}, {@code Disabled}, {@code ApiNotServed}
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record FeatureState(
    @JsonPropertyDescription("True when the feature's components are deployed.") Boolean running,
    @JsonPropertyDescription("Why it runs or not, in one CamelCase word.") String reason,
    @JsonPropertyDescription("Why it runs or not, for people.") String message) {}
