package dev.soko.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import dev.soko.api.v1alpha1.schema.ContainerResourcesByName;
import dev.soko.api.v1alpha1.schema.DeepMerge;
import io.fabric8.crd.generator.annotation.SchemaFrom;
import io.fabric8.crdv2.generator.v1.SchemaCustomizer;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.fabric8.kubernetes.api.model.apps.DaemonSetUpdateStrategy;
import java.util.Map;

/**
 * The per-node DaemonSet: driver in node mode plus provisioner and snapshotter (and registrar and
 * livenessprobe with driver.registration Sidecars).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
// Bounds for the cost of the resources rules (see DeepMerge): one entry per container at most.
@SchemaCustomizer(value = DeepMerge.class, input = "{properties: {resources: {maxProperties: 5}}}")
public class NodePluginSpec extends Placement {
  public static final String DEFAULT_KUBELET_DIR = "/var/lib/kubelet";

  /** The containers of the node pods, as the operator names them; the keys of resources. */
  public static final String CONTAINERS =
      "soko-driver, csi-provisioner, csi-snapshotter, node-driver-registrar, liveness-probe";

  private static final String CONTAINER_LIST =
      "'soko-driver', 'csi-provisioner', 'csi-snapshotter', 'node-driver-registrar',"
          + " 'liveness-probe'";

  @JsonPropertyDescription("The kubelet's root directory on the nodes.")
  @Default(DEFAULT_KUBELET_DIR)
  @Size(max = 4096)
  @ValidationRule(
      value = Validation.CLEAN_PATH_RULE + " && self != '/'",
      message = Validation.CLEAN_PATH_MESSAGE)
  private String kubeletDir = DEFAULT_KUBELET_DIR;

  @JsonPropertyDescription("DaemonSet update strategy (apps/v1 DaemonSetUpdateStrategy).")
  @ValidationRule(
      value =
          "(!has(self.type) || self.type in ['RollingUpdate', 'OnDelete'])"
              + " && (!has(self.rollingUpdate) || (!has(self.type) || self.type == 'RollingUpdate')"
              + " && (!has(self.rollingUpdate.maxUnavailable) || "
              + "(type(self.rollingUpdate.maxUnavailable) == int ?"
              + " int(self.rollingUpdate.maxUnavailable) >= 0 :"
              + " string(self.rollingUpdate.maxUnavailable).matches('^[0-9]+%$')))"
              + " && (!has(self.rollingUpdate.maxSurge) ||"
              + " (type(self.rollingUpdate.maxSurge) == int ? int(self.rollingUpdate.maxSurge) >= 0"
              + " : string(self.rollingUpdate.maxSurge).matches('^[0-9]+%$'))))",
      message =
          "type must be RollingUpdate or OnDelete; rollingUpdate only with RollingUpdate, its"
              + " maxUnavailable and maxSurge a non-negative number or a percentage such as 10%")
  // A surge pod runs beside the old one on the same node: its driver cannot bind the sockets the
  // old one still listens on, so it never becomes ready and the DaemonSet never removes the old
  // pod. The rollout is one node at a time (maxSurge 0) and needs maxUnavailable above 0.
  @ValidationRule(
      value =
          "!has(self.rollingUpdate) || !has(self.rollingUpdate.maxSurge)"
              + " || string(self.rollingUpdate.maxSurge) in ['0', '0%']",
      message =
          "rollingUpdate.maxSurge must be 0: a surge pod's driver cannot take over the node's CSI"
              + " and registration sockets while the old pod serves them")
  @ValidationRule(
      value =
          "!has(self.rollingUpdate) || !has(self.rollingUpdate.maxUnavailable)"
              + " || !(string(self.rollingUpdate.maxUnavailable) in ['0', '0%'])",
      message =
          "rollingUpdate.maxUnavailable must not be 0: with maxSurge 0 the rollout could not"
              + " start")
  private DaemonSetUpdateStrategy updateStrategy;

  @JsonPropertyDescription(
      "Resources per container of the node pods (core/v1 ResourceRequirements each), keyed by"
          + " container name: "
          + CONTAINERS
          + ". soko-driver falls back to driver.resources; node-driver-registrar and"
          + " liveness-probe run only with driver.registration Sidecars, csi-snapshotter only"
          + " with snapshots enabled.")
  @SchemaFrom(type = ContainerResourcesByName.class)
  @ValidationRule(
      value = "self.all(k, k in [" + CONTAINER_LIST + "])",
      message = "keys must name a container of the node pods: " + CONTAINERS)
  private Map<String, ResourceRequirements> resources;

  public String getKubeletDir() {
    return kubeletDir;
  }

  public void setKubeletDir(String kubeletDir) {
    this.kubeletDir = kubeletDir;
  }

  @Override
  public Map<String, ResourceRequirements> getResources() {
    return resources;
  }

  @Override
  public void setResources(Map<String, ResourceRequirements> resources) {
    this.resources = resources;
  }

  public DaemonSetUpdateStrategy getUpdateStrategy() {
    return updateStrategy;
  }

  public void setUpdateStrategy(DaemonSetUpdateStrategy updateStrategy) {
    this.updateStrategy = updateStrategy;
  }
}
