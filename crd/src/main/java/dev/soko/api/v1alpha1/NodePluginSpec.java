package dev.soko.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.apps.DaemonSetUpdateStrategy;

/**
 * The per-node DaemonSet: driver in node mode plus provisioner and snapshotter (and registrar and
 * livenessprobe with driver.registration Sidecars).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class NodePluginSpec extends Placement {
  public static final String DEFAULT_KUBELET_DIR = "/var/lib/kubelet";

  @JsonPropertyDescription("The kubelet's root directory on the nodes.")
  @Default(DEFAULT_KUBELET_DIR)
  @Size(max = 4096)
  @ValidationRule(
      value = Validation.ABSOLUTE_PATH_RULE,
      message = "must be an absolute path without '..'")
  private String kubeletDir = DEFAULT_KUBELET_DIR;

  @JsonPropertyDescription("DaemonSet update strategy.")
  private DaemonSetUpdateStrategy updateStrategy;

  public String getKubeletDir() {
    return kubeletDir;
  }

  public void setKubeletDir(String kubeletDir) {
    this.kubeletDir = kubeletDir;
  }

  public DaemonSetUpdateStrategy getUpdateStrategy() {
    return updateStrategy;
  }

  public void setUpdateStrategy(DaemonSetUpdateStrategy updateStrategy) {
    this.updateStrategy = updateStrategy;
  }
}
