package dev.soko.api.v1alpha1.schema;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/**
 * The schema of one container's core/v1 ResourceRequirements, with quantities checked. No {@code
 * claims}: the pods declare no resource claims, so any claim would be refused in the pod.
 */
public class ContainerResources {
  @JsonProperty("limits")
  @JsonPropertyDescription("Limits of the container (core/v1 ResourceRequirements.limits).")
  private ResourceQuantities limits;

  @JsonProperty("requests")
  @JsonPropertyDescription(
      "Requests of the container (core/v1 ResourceRequirements.requests); each at most its limit.")
  private ResourceQuantities requests;
}
