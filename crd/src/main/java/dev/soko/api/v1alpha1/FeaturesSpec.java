package dev.soko.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;

/** Optional features. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class FeaturesSpec {
  @JsonPropertyDescription(
      "Publish CSIStorageCapacity per node and pool so the scheduler places pods where space is.")
  @Default("true")
  private Boolean capacityTracking = true;

  @JsonPropertyDescription(
      "Controller-side volume health monitoring (csi-external-health-monitor-controller). Not"
          + " available yet: the controller-mode driver cannot report volume conditions because"
          + " pools live on nodes, so the monitor is not deployed and the status says so. Node-side"
          + " conditions come from kubelet (CSIVolumeHealth feature gate) and need no setting.")
  @Default("false")
  private Boolean volumeHealthMonitor = false;

  public Boolean getCapacityTracking() {
    return capacityTracking;
  }

  public void setCapacityTracking(Boolean capacityTracking) {
    this.capacityTracking = capacityTracking;
  }

  public Boolean getVolumeHealthMonitor() {
    return volumeHealthMonitor;
  }

  public void setVolumeHealthMonitor(Boolean volumeHealthMonitor) {
    this.volumeHealthMonitor = volumeHealthMonitor;
  }
}
