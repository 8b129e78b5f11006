package dev.soko.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/** Snapshot support: the snapshotter sidecar and a VolumeSnapshotClass. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class SnapshotSpec {
  @JsonPropertyDescription(
      "Run csi-snapshotter and create the VolumeSnapshotClass; where the cluster serves"
          + " groupsnapshot.storage.k8s.io/v1, also the controller's group snapshotter and a"
          + " VolumeGroupSnapshotClass of the same name.")
  @Default("true")
  private Boolean enabled = true;

  @JsonPropertyDescription(
      "VolumeSnapshotClass (and VolumeGroupSnapshotClass) name; defaults to"
          + " '<StorageCluster name>-snapshots'.")
  @Size(max = 253)
  @ValidationRule(
      value = Validation.DNS_SUBDOMAIN_RULE,
      message = "must be a DNS subdomain (lower case letters, digits, '-' and '.')")
  private String className;

  @JsonPropertyDescription(
      "Deletion policy of the VolumeSnapshotClass and the VolumeGroupSnapshotClass.")
  @Default("Delete")
  private DeletionPolicy deletionPolicy = DeletionPolicy.Delete;

  @JsonPropertyDescription(
      "Mark the VolumeSnapshotClass (and the VolumeGroupSnapshotClass) default, unless another"
          + " one already is.")
  @JsonProperty("default")
  @Default("false")
  private Boolean defaultClass = false;

  @JsonPropertyDescription(
      "Label the VolumeSnapshotClass velero.io/csi-volumesnapshot-class, so that Velero's CSI"
          + " snapshots and its snapshot data mover use it for this driver's volumes (Velero picks"
          + " the class so labelled for each driver). Leave false where another class of this"
          + " driver is Velero's. Absent means false.")
  // No schema default: a default would be written into every stored StorageCluster, and an
  // operator of an earlier release, which does not know the field, could no longer read it.
  private Boolean velero = false;

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

  public Boolean getVelero() {
    return velero;
  }

  public void setVelero(Boolean velero) {
    this.velero = velero;
  }

  /** VolumeSnapshotClass deletion policies. */
  public enum DeletionPolicy {
    Delete,
    Retain
  }
}
