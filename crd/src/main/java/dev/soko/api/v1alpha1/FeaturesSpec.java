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

  @JsonPropertyDescription(
      "Changed block tracking for backup tools: the controller pod runs the snapshot metadata"
          + " sidecar (external-snapshot-metadata) with its Service, TLS certificate and"
          + " SnapshotMetadataService object, where snapshots are on and the cluster serves"
          + " cbt.storage.k8s.io/v1beta1. status.changedBlockTracking says whether it runs and"
          + " why not.")
  @Default("true")
  private Boolean changedBlockTracking = true;

  @JsonPropertyDescription(
      "Grow a claim on its node as soon as it is resized: the controller hands the growth to the"
          + " volume's node, which grows the storage and the filesystem online, so pods see the new"
          + " size in seconds. false: the kubelet grows it (NodeExpandVolume) when it next syncs a"
          + " pod that uses the claim, about a minute later, as with other node-local drivers.")
  @Default("true")
  private Boolean immediateGrowth = true;

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

  public Boolean getChangedBlockTracking() {
    return changedBlockTracking;
  }

  public void setChangedBlockTracking(Boolean changedBlockTracking) {
    this.changedBlockTracking = changedBlockTracking;
  }

  public Boolean getImmediateGrowth() {
    return immediateGrowth;
  }

  public void setImmediateGrowth(Boolean immediateGrowth) {
    this.immediateGrowth = immediateGrowth;
  }
}
