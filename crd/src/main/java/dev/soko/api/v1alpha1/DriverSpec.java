package dev.soko.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import dev.soko.api.v1alpha1.schema.ContainerResources;
import dev.soko.api.v1alpha1.schema.DeepMerge;
import io.fabric8.crd.generator.annotation.SchemaFrom;
import io.fabric8.crdv2.generator.v1.SchemaCustomizer;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import java.util.ArrayList;
import java.util.List;

/** The CSI driver's identity and process settings. */
@JsonInclude(JsonInclude.Include.NON_NULL)
// Bounds for the cost of the extraArgs rule (see DeepMerge).
@SchemaCustomizer(
    value = DeepMerge.class,
    input = "{properties: {extraArgs: {items: {maxLength: 4096}}}}")
public class DriverSpec {
  public static final String DEFAULT_NAME = "csi.soko.dev";

  @JsonPropertyDescription(
      "CSI driver name, unique in the cluster. Immutable in practice: changing it installs a new"
          + " driver.")
  @Default(DEFAULT_NAME)
  @Size(max = 63)
  @ValidationRule(
      value = Validation.DNS_SUBDOMAIN_RULE,
      message =
          "must be a DNS subdomain such as csi.example.com (lower case letters, digits, '-' and"
              + " '.')")
  private String name = DEFAULT_NAME;

  @JsonPropertyDescription("Driver log level.")
  @Default("info")
  private LogLevel logLevel = LogLevel.info;

  @JsonPropertyDescription(
      "Driver image, a full reference used verbatim; defaults to the versions table's driver"
          + " image qualified with images.registry or the operator's default registry.")
  @Size(max = 512)
  @ValidationRule(value = Validation.IMAGE_RULE, message = Validation.IMAGE_MESSAGE)
  private String image;

  @JsonPropertyDescription(
      "Resources of the driver container (core/v1 ResourceRequirements) in the node and the"
          + " controller pods, unless nodePlugin.resources or controller.resources name"
          + " soko-driver.")
  @SchemaFrom(type = ContainerResources.class)
  private ResourceRequirements resources;

  @JsonPropertyDescription(
      "Extra command-line arguments appended to the driver's, each --allowed-path-root=DIR (an"
          + " extra root that staging and target paths may lie under). Every other flag of the"
          + " driver is set from a field of this spec, or stops the driver (--help, --version).")
  @Size(max = 32)
  @ValidationRule(
      value = "self.all(a, a.size() <= 4096 && a.matches('^--allowed-path-root=/[^,]*$'))",
      message =
          "each item must be --allowed-path-root=DIR with an absolute DIR: the driver's other"
              + " flags are set from spec fields")
  private List<String> extraArgs = new ArrayList<>();

  @JsonPropertyDescription(
      "Port of the driver's Prometheus endpoint (/metrics, per-RPC counts and durations) on the"
          + " pod IP of every node and controller pod; unset: no metrics. 9808 is the health port;"
          + " with registration Sidecars, 9809 is node-driver-registrar's; 9811 is csi-resizer's.")
  @Min(1)
  @Max(65535)
  @ValidationRule(value = "self != 9808", message = "9808 is the liveness probe's health port")
  @ValidationRule(
      value = "self != 9811",
      message =
          "9811 is the http endpoint (leader-election health) of the controller pod's csi-resizer")
  private Integer metricsPort;

  @JsonPropertyDescription(
      "How the driver registers with the kubelet and serves its liveness endpoint. BuiltIn: the"
          + " driver container does both (two fewer images per node, nothing to mirror for"
          + " air-gapped clusters). Sidecars: the upstream node-driver-registrar and livenessprobe"
          + " containers, as before.")
  @Default("BuiltIn")
  private Registration registration = Registration.BuiltIn;

  @JsonPropertyDescription("Maximum volumes per node reported to the scheduler; 0 means unlimited.")
  @Min(0)
  @Max(1000000)
  private Integer maxVolumesPerNode;

  public Integer getMetricsPort() {
    return metricsPort;
  }

  public void setMetricsPort(Integer metricsPort) {
    this.metricsPort = metricsPort;
  }

  public String getName() {
    return name;
  }

  public void setName(String name) {
    this.name = name;
  }

  public LogLevel getLogLevel() {
    return logLevel;
  }

  public void setLogLevel(LogLevel logLevel) {
    this.logLevel = logLevel;
  }

  public String getImage() {
    return image;
  }

  public void setImage(String image) {
    this.image = image;
  }

  public ResourceRequirements getResources() {
    return resources;
  }

  public void setResources(ResourceRequirements resources) {
    this.resources = resources;
  }

  public List<String> getExtraArgs() {
    return extraArgs;
  }

  public void setExtraArgs(List<String> extraArgs) {
    this.extraArgs = extraArgs;
  }

  public Registration getRegistration() {
    return registration;
  }

  public void setRegistration(Registration registration) {
    this.registration = registration;
  }

  public Integer getMaxVolumesPerNode() {
    return maxVolumesPerNode;
  }

  public void setMaxVolumesPerNode(Integer maxVolumesPerNode) {
    this.maxVolumesPerNode = maxVolumesPerNode;
  }
}
