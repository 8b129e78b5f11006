package dev.soko.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.ValidationRule;

/** The controller Deployment: driver in controller mode plus external-resizer. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class ControllerSpec extends Placement {
  @JsonPropertyDescription("Replicas of the controller; the sidecars elect a leader.")
  @Default("1")
  @ValidationRule(value = "self >= 0", message = "replicas must not be negative")
  @Max(10)
  private Integer replicas = 1;

  public Integer getReplicas() {
    return replicas;
  }

  public void setReplicas(Integer replicas) {
    this.replicas = replicas;
  }
}
