package dev.soko.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import dev.soko.api.v1alpha1.schema.DeepMerge;
import io.fabric8.crdv2.generator.v1.SchemaCustomizer;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.ArrayList;
import java.util.List;

/** Where images come from. */
@JsonInclude(JsonInclude.Include.NON_NULL)
// Bounds for the cost of the pullSecrets rule (see DeepMerge).
@SchemaCustomizer(
    value = DeepMerge.class,
    input = "{properties: {pullSecrets: {items: {maxLength: 253}}}}")
public class ImagesSpec {
  @JsonPropertyDescription(
      "Registry host and optional path prefix the driver and sidecar images are pulled from."
          + " The versions table names images by repository path and tag only, e.g."
          + " 'sig-storage/csi-resizer:v1.14.0'; with 'mirror.example:5000/k8s' that becomes"
          + " 'mirror.example:5000/k8s/sig-storage/csi-resizer:v1.14.0'. Unset: the operator's"
          + " default (its --image-registry flag or SOKO_IMAGE_REGISTRY); when that is unset too,"
          + " images stay unqualified and the container runtime resolves them (the status says"
          + " so). overrides and driver.image are used verbatim.")
  @Size(max = 253)
  @ValidationRule(
      value =
          "self.matches('^[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?(\\\\.[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?)*"
              + "(:[0-9]+)?(/[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*)*$')",
      message =
          "must be a registry host with optional port and path, such as mirror.example:5000/k8s,"
              + " without scheme or trailing '/'")
  private String registry;

  @JsonPropertyDescription(
      "Per-sidecar image overrides: full references including the registry, used verbatim.")
  private ImageOverrides overrides = new ImageOverrides();

  @JsonPropertyDescription("Image pull policy of every container.")
  @Default("IfNotPresent")
  private PullPolicy pullPolicy = PullPolicy.IfNotPresent;

  @JsonPropertyDescription(
      "Names of image pull secrets in spec.namespace, copied to every ServiceAccount's pods.")
  @Size(max = 16)
  @ValidationRule(
      value = "self.all(s, s.size() <= 253 && " + "s.matches('" + Validation.DNS_SUBDOMAIN + "'))",
      message = "each item must be a Secret name (lower case letters, digits, '-' and '.')")
  private List<String> pullSecrets = new ArrayList<>();

  public String getRegistry() {
    return registry;
  }

  public void setRegistry(String registry) {
    this.registry = registry;
  }

  public ImageOverrides getOverrides() {
    return overrides;
  }

  public void setOverrides(ImageOverrides overrides) {
    this.overrides = overrides;
  }

  public PullPolicy getPullPolicy() {
    return pullPolicy;
  }

  public void setPullPolicy(PullPolicy pullPolicy) {
    this.pullPolicy = pullPolicy;
  }

  public List<String> getPullSecrets() {
    return pullSecrets;
  }

  public void setPullSecrets(List<String> pullSecrets) {
    this.pullSecrets = pullSecrets;
  }

  /** Kubernetes image pull policies. */
  public enum PullPolicy {
    Always,
    IfNotPresent,
    Never
  }
}
