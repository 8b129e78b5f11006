package dev.soko.api.v1alpha1.schema;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import dev.soko.api.v1alpha1.Validation;
import io.fabric8.crdv2.generator.v1.SchemaCustomizer;
import io.fabric8.kubernetes.api.model.Quantity;

/**
 * The resources a Soko container may request or be limited to. Extended resources and huge pages
 * are left out on purpose: no driver or sidecar container uses them, and a name the API server does
 * not know would only be refused in the pod.
 *
 * <p>A quantity is int-or-string, for which the generator's {@code @Pattern} and {@code @Min} do
 * nothing; the customizer adds the pattern (strings), the minimum (integers) and a length bound.
 */
@SchemaCustomizer(
    value = DeepMerge.class,
    input =
        "{properties: {cpu: "
            + ResourceQuantities.QUANTITY
            + ", memory: "
            + ResourceQuantities.QUANTITY
            + ", 'ephemeral-storage': "
            + ResourceQuantities.QUANTITY
            + "}}")
public class ResourceQuantities {
  static final String QUANTITY =
      "{pattern: '" + Validation.RESOURCE_QUANTITY_PATTERN + "', maxLength: 64, minimum: 0}";

  @JsonPropertyDescription("CPU, e.g. 100m or 1.")
  private Quantity cpu;

  @JsonPropertyDescription("Memory, e.g. 128Mi.")
  private Quantity memory;

  @JsonPropertyDescription("Ephemeral storage, e.g. 1Gi.")
  private Quantity ephemeralStorage;

  // Getters only for the schema generator; this class is never instantiated.
  public Quantity getCpu() {
    return cpu;
  }

  public Quantity getMemory() {
    return memory;
  }

  @JsonProperty("ephemeral-storage")
  public Quantity getEphemeralStorage() {
    return ephemeralStorage;
  }
}
