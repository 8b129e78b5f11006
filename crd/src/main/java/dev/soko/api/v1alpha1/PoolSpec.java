package dev.soko.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import dev.soko.api.v1alpha1.schema.DeepMerge;
import io.fabric8.crdv2.generator.v1.SchemaCustomizer;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.List;
import java.util.Map;

/** A storage pool: a host directory on the nodes of the node plugin that its selector picks. */
@JsonInclude(JsonInclude.Include.NON_NULL)
// Bounds the API server needs to estimate the cost of the nodeSelector rule (see DeepMerge).
@SchemaCustomizer(
    value = DeepMerge.class,
    input =
        "{properties: {nodeSelector: {maxProperties: 16, additionalProperties: {maxLength: 63}}}}")
public class PoolSpec {
  @JsonPropertyDescription(
      "Pool name, referenced by storage classes. At most 58 characters: the node pods name the"
          + " pool's volume 'pool-<name>', a DNS label.")
  @Required
  @Size(max = 58)
  @ValidationRule(
      value = Validation.DNS_LABEL_RULE,
      message = "must be lower case letters, digits and '-', starting and ending alphanumeric")
  private String name;

  @JsonPropertyDescription(
      "Absolute, clean host directory holding the pool's volumes (image files, or btrfs"
          + " subvolumes); one directory per pool, not inside another pool's.")
  @Required
  @Size(max = 4096)
  @ValidationRule(
      // ',' separates the fields of the driver's --pool flag; '/' would mount over the root.
      value = Validation.CLEAN_PATH_RULE + " && self != '/' && !self.contains(',')",
      message = Validation.CLEAN_PATH_MESSAGE + ", not '/' and without ','")
  private String path;

  @JsonPropertyDescription(
      "Bytes the pool may hand out, greater than 0. Unset: all the free space of the pool's"
          + " filesystem.")
  @Size(max = 64)
  @ValidationRule(value = Validation.QUANTITY_RULE, message = Validation.QUANTITY_MESSAGE)
  @ValidationRule(
      value = Validation.ZERO_QUANTITY_RULE,
      message = "must be greater than 0; leave it unset for all the free space")
  private String capacity;

  @JsonPropertyDescription("Over-provisioning ratio (1 = none, 2 = twice the capacity).")
  @Default("1.0")
  @Min(1)
  @Max(1000)
  private Double overprovisionRatio = 1.0;

  @JsonPropertyDescription(
      "Filesystems volumes of this pool may use; empty: all its backend serves (ext4 and xfs for"
          + " ImageFile, btrfs for BtrfsSubvolume).")
  @Size(max = 2)
  @ValidationRule(
      value = "self.all(a, self.exists_one(b, b == a))",
      message = "must not name a filesystem twice")
  private List<FsType> fsTypes;

  @JsonPropertyDescription(
      "How the pool stores volumes; it cannot change on an existing pool (its volumes would be"
          + " stranded). ImageFile: each volume is a sparse image file in the pool directory,"
          + " attached through a loop device and formatted ext4 or xfs; filesystem and block"
          + " volumes; the directory may be on any filesystem (snapshots and clones are reflink"
          + " copies on xfs and btrfs, sparse copies elsewhere). BtrfsSubvolume: each volume is a"
          + " btrfs subvolume in the pool directory whose qgroup limit is its capacity (writes"
          + " beyond it fail with EDQUOT), bind-mounted for the pod: no loop device and no second"
          + " filesystem, so I/O runs at the disk's speed; snapshots and clones are subvolume"
          + " snapshots (O(1)) in the same pool, and expansion raises the limit online. It serves"
          + " filesystem volumes only, with fsType btrfs: its storage classes get fsType btrfs, and"
          + " a block-mode claim on them fails at provisioning (InvalidArgument). It needs the pool"
          + " directory on a btrfs filesystem with quotas enabled (btrfs quota enable"
          + " <mountpoint>); the driver refuses the pool, saying so, otherwise.")
  @Default("ImageFile")
  private PoolBackend backend = PoolBackend.ImageFile;

  public String getName() {
    return name;
  }

  public void setName(String name) {
    this.name = name;
  }

  public String getPath() {
    return path;
  }

  public void setPath(String path) {
    this.path = path;
  }

  public String getCapacity() {
    return capacity;
  }

  public void setCapacity(String capacity) {
    this.capacity = capacity;
  }

  public Double getOverprovisionRatio() {
    return overprovisionRatio;
  }

  public void setOverprovisionRatio(Double overprovisionRatio) {
    this.overprovisionRatio = overprovisionRatio;
  }

  public PoolBackend getBackend() {
    return backend;
  }

  public void setBackend(PoolBackend backend) {
    this.backend = backend;
  }

  public List<FsType> getFsTypes() {
    return fsTypes;
  }

  public void setFsTypes(List<FsType> fsTypes) {
    this.fsTypes = fsTypes;
  }

  // ---- placement: where the pool may live ------------------------------------------------

  @JsonPropertyDescription(
      "Require the pool path to be the root of a mounted filesystem (a disk mounted there), not a"
          + " directory on some other filesystem. Off by default; turn it on for dedicated disks.")
  @Default("false")
  private Boolean requireMountPoint = false;

  @JsonPropertyDescription(
      "Allow the pool on the filesystem that holds the kubelet's directory (the node's root"
          + " filesystem in practice). Off by default: the node plugin mounts pool paths with"
          + " hostPath DirectoryOrCreate, so a disk that is not mounted leaves an empty directory on"
          + " the root filesystem, which is refused rather than filled.")
  @Default("false")
  private Boolean allowRootFilesystem = false;

  @JsonPropertyDescription(
      "Node labels a node must carry for the pool to exist on it, as in a Pod's nodeSelector: every"
          + " pair must match. Unset or empty: every node of the node plugin. On any other node the"
          + " pool is NotSelected: it offers no capacity (so the scheduler places no volume of its"
          + " storage classes there), takes no new volume, and the driver neither creates nor"
          + " writes its directory; the kubelet still makes the empty hostPath directory, since"
          + " one DaemonSet serves every node. Relabelling a node takes effect without a restart;"
          + " a pool that stops being selected keeps serving the volumes it has. A map rather"
          + " than node-affinity terms: pools follow hardware that admins label, and"
          + " nodePlugin.affinity already takes full expressions for where the plugin runs.")
  @ValidationRule(
      value =
          "self.all(k, k.size() <= 317 && k.matches('"
              + Validation.LABEL_KEY
              + "') && self[k].matches('"
              + Validation.LABEL_VALUE
              + "'))",
      message = "keys must be label keys and values label values (at most 63 characters each)")
  private Map<String, String> nodeSelector;

  public Map<String, String> getNodeSelector() {
    return nodeSelector;
  }

  public void setNodeSelector(Map<String, String> nodeSelector) {
    this.nodeSelector = nodeSelector;
  }

  public Boolean getRequireMountPoint() {
    return requireMountPoint;
  }

  public void setRequireMountPoint(Boolean requireMountPoint) {
    this.requireMountPoint = requireMountPoint;
  }

  public Boolean getAllowRootFilesystem() {
    return allowRootFilesystem;
  }

  public void setAllowRootFilesystem(Boolean allowRootFilesystem) {
    this.allowRootFilesystem = allowRootFilesystem;
  }
}
