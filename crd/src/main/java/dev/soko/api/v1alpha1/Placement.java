package dev.soko.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.kubernetes.api.model.Affinity;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.fabric8.kubernetes.api.model.Toleration;
import java.util.List;
import java.util.Map;

/** Scheduling and resources shared by the node plugin and the controller. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public abstract class Placement {
  @JsonPropertyDescription("Node labels the pods must match.")
  private Map<String, String> nodeSelector;

  @JsonPropertyDescription("Tolerations of the pods.")
  private List<Toleration> tolerations;

  @JsonPropertyDescription("Affinity of the pods.")
  private Affinity affinity;

  @JsonPropertyDescription("PriorityClass of the pods.")
  private String priorityClassName;

  @JsonPropertyDescription(
      "Resources per container, keyed by container name: soko-driver (falls back to"
          + " driver.resources), csi-provisioner and csi-snapshotter on nodes, csi-resizer in the"
          + " controller, and with driver.registration Sidecars node-driver-registrar on nodes"
          + " and liveness-probe in both.")
  private Map<String, ResourceRequirements> resources;

  public Map<String, String> getNodeSelector() {
    return nodeSelector;
  }

  public void setNodeSelector(Map<String, String> nodeSelector) {
    this.nodeSelector = nodeSelector;
  }

  public List<Toleration> getTolerations() {
    return tolerations;
  }

  public void setTolerations(List<Toleration> tolerations) {
    this.tolerations = tolerations;
  }

  public Affinity getAffinity() {
    return affinity;
  }

  public void setAffinity(Affinity affinity) {
    this.affinity = affinity;
  }

  public String getPriorityClassName() {
    return priorityClassName;
  }

  public void setPriorityClassName(String priorityClassName) {
    this.priorityClassName = priorityClassName;
  }

  public Map<String, ResourceRequirements> getResources() {
    return resources;
  }

  public void setResources(Map<String, ResourceRequirements> resources) {
    this.resources = resources;
  }
}
