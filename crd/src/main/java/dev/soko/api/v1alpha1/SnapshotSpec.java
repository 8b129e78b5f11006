package dev.soko.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/**
 * Snapshot support: the snapshotter sidecar, a VolumeSnapshotClass and, where the cluster serves
 * group snapshots, a VolumeGroupSnapshotClass.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class SnapshotSpec {
  @JsonPropertyDescription(
      "Run csi-snapshotter and create the VolumeSnapshotClass. On Kubernetes 1.34 and newer, where"
          + " the cluster serves groupsnapshot.storage.k8s.io/v1 (the volume group snapshot CRDs v1"
          + " and a snapshot-controller that serves them), csi-snapshotter takes volume group"
          + " snapshots too and a VolumeGroupSnapshotClass of the same name is created. Installed"
          + " later, the API is found within one resync interval of the operator, which then rolls"
          + " the node plugin out so that csi-snapshotter takes it up.")
  @Default("true")
  private Boolean enabled = true;

  @JsonPropertyDescription(
      "Name of the VolumeSnapshotClass and of the VolumeGroupSnapshotClass; defaults to"
          + " '<StorageCluster name>-snapshots'.")
  @Size(max = 253)
  @ValidationRule(
      value = Validation.DNS_SUBDOMAIN_RULE,
      message = "must be a DNS subdomain (lower case letters, digits, '-' and '.')")
  private String className;

  @JsonPropertyDescription(
      "Deletion policy of the VolumeSnapshotClass and of the VolumeGroupSnapshotClass (whose"
          + " deletionPolicy is immutable: a change recreates it).")
  @Default("Delete")
  private DeletionPolicy deletionPolicy = DeletionPolicy.Delete;

  @JsonPropertyDescription(
      "Mark the VolumeSnapshotClass default, unless another one already is; the same for the"
          + " VolumeGroupSnapshotClass among group snapshot classes.")
  @JsonProperty("default")
  @Default("false")
  private Boolean defaultClass = false;

  public Boolean getEnabled() {
    return enabled;
  }

  public void setEnabled(Boolean enabled) {
    this.enabled = enabled;
  }

  public String getClassName() {
    return className;
  }

  public void setClassName(String className) {
    this.className = className;
  }

  public DeletionPolicy getDeletionPolicy() {
    return deletionPolicy;
  }

  public void setDeletionPolicy(DeletionPolicy deletionPolicy) {
    this.deletionPolicy = deletionPolicy;
  }

  @JsonProperty("default")
  public Boolean getDefaultClass() {
    return defaultClass;
  }

  @JsonProperty("default")
  public void setDefaultClass(Boolean defaultClass) {
    this.defaultClass = defaultClass;
  }

  /** VolumeSnapshotClass deletion policies. */
  public enum DeletionPolicy {
    Delete,
    Retain
  }
}
