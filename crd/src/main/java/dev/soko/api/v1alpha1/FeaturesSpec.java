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

  @JsonPropertyDescription("Run csi-external-health-monitor-controller in the controller.")
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
