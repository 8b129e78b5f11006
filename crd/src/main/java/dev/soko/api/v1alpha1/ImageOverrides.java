package dev.soko.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/** Full image references replacing the versions table's choice for one sidecar each. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class ImageOverrides {
  private static final String RULE = Validation.IMAGE_RULE;
  private static final String MESSAGE = Validation.IMAGE_MESSAGE;

  @JsonPropertyDescription("external-provisioner (csi-provisioner).")
  @Size(max = 512)
  @ValidationRule(value = RULE, message = MESSAGE)
  private String provisioner;

  @JsonPropertyDescription("external-resizer (csi-resizer).")
  @Size(max = 512)
  @ValidationRule(value = RULE, message = MESSAGE)
  private String resizer;

  @JsonPropertyDescription("csi-snapshotter; used only with snapshots enabled.")
  @Size(max = 512)
  @ValidationRule(value = RULE, message = MESSAGE)
  private String snapshotter;

  @JsonPropertyDescription("node-driver-registrar; used only with driver.registration Sidecars.")
  @Size(max = 512)
  @ValidationRule(value = RULE, message = MESSAGE)
  private String registrar;

  @JsonPropertyDescription("livenessprobe; used only with driver.registration Sidecars.")
  @Size(max = 512)
  @ValidationRule(value = RULE, message = MESSAGE)
  private String livenessProbe;

  @JsonPropertyDescription(
      "csi-external-health-monitor-controller; not deployed yet (see"
          + " features.volumeHealthMonitor).")
  @Size(max = 512)
  @ValidationRule(value = RULE, message = MESSAGE)
  private String healthMonitor;

  public String getProvisioner() {
    return provisioner;
  }

  public void setProvisioner(String provisioner) {
    this.provisioner = provisioner;
  }

  public String getResizer() {
    return resizer;
  }

  public void setResizer(String resizer) {
    this.resizer = resizer;
  }

  public String getSnapshotter() {
    return snapshotter;
  }

  public void setSnapshotter(String snapshotter) {
    this.snapshotter = snapshotter;
  }

  public String getRegistrar() {
    return registrar;
  }

  public void setRegistrar(String registrar) {
    this.registrar = registrar;
  }

  public String getLivenessProbe() {
    return livenessProbe;
  }

  public void setLivenessProbe(String livenessProbe) {
    this.livenessProbe = livenessProbe;
  }

  public String getHealthMonitor() {
    return healthMonitor;
  }

  public void setHealthMonitor(String healthMonitor) {
    this.healthMonitor = healthMonitor;
  }
}
