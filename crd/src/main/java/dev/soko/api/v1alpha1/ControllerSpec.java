package dev.soko.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import dev.soko.api.v1alpha1.schema.ContainerResourcesByName;
import dev.soko.api.v1alpha1.schema.DeepMerge;
import io.fabric8.crd.generator.annotation.SchemaFrom;
import io.fabric8.crdv2.generator.v1.SchemaCustomizer;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import java.util.Map;

/**
 * The controller Deployment: driver in controller mode plus external-resizer (and csi-snapshotter
 * for group snapshots, where they run).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
// Bounds for the cost of the resources rules (see DeepMerge): one entry per container at most.
@SchemaCustomizer(value = DeepMerge.class, input = "{properties: {resources: {maxProperties: 5}}}")
public class ControllerSpec extends Placement {
  /**
   * The containers of the controller pods, as the operator names them; the keys of resources. The
   * health monitor is not among them: it is never deployed (see features.volumeHealthMonitor).
   */
  public static final String CONTAINERS =
      "soko-driver, csi-resizer, csi-group-snapshotter, csi-snapshot-metadata, liveness-probe";

  private static final String CONTAINER_LIST =
      "'soko-driver', 'csi-resizer', 'csi-group-snapshotter', 'csi-snapshot-metadata',"
          + " 'liveness-probe'";

  @JsonPropertyDescription("Replicas of the controller; the sidecars elect a leader.")
  @Default("1")
  @ValidationRule(value = "self >= 0", message = "replicas must not be negative")
  @Max(10)
  private Integer replicas = 1;

  @JsonPropertyDescription(
      "Resources per container of the controller pods (core/v1 ResourceRequirements each), keyed"
          + " by container name: "
          + CONTAINERS
          + ". soko-driver falls back to driver.resources; csi-group-snapshotter runs only"
          + " with snapshots enabled and where the cluster serves group snapshots;"
          + " csi-snapshot-metadata where changed block tracking runs (status.changedBlockTracking);"
          + " liveness-probe only with driver.registration Sidecars.")
  @SchemaFrom(type = ContainerResourcesByName.class)
  @ValidationRule(
      value = "self.all(k, k in [" + CONTAINER_LIST + "])",
      message = "keys must name a container of the controller pods: " + CONTAINERS)
  private Map<String, ResourceRequirements> resources;

  public Integer getReplicas() {
    return replicas;
  }

  public void setReplicas(Integer replicas) {
    this.replicas = replicas;
  }

  @Override
  public Map<String, ResourceRequirements> getResources() {
    return resources;
  }

  @Override
  public void setResources(Map<String, ResourceRequirements> resources) {
    this.resources = resources;
  }
}
