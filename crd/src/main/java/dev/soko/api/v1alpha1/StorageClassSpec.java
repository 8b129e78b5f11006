package dev.soko.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import dev.soko.api.v1alpha1.schema.DeepMerge;
import io.fabric8.crdv2.generator.v1.SchemaCustomizer;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.List;

/** One StorageClass backed by one pool. */
@JsonInclude(JsonInclude.Include.NON_NULL)
// Bounds for the cost of the mountOptions rule (see DeepMerge).
@SchemaCustomizer(
    value = DeepMerge.class,
    input = "{properties: {mountOptions: {items: {maxLength: 256}}}}")
public class StorageClassSpec {
  @JsonPropertyDescription("StorageClass name (cluster-wide).")
  @Required
  @Size(max = 253)
  @ValidationRule(
      value = Validation.DNS_SUBDOMAIN_RULE,
      message = "must be a DNS subdomain (lower case letters, digits, '-' and '.')")
  private String name;

  @JsonPropertyDescription("Name of the pool in spec.pools that backs this class.")
  @Required
  @Size(max = 58)
  private String pool;

  // No schema default: the right one depends on the pool's backend, which a default cannot see.
  @JsonPropertyDescription(
      "Filesystem of volumes of this class. Unset: ext4 on an ImageFile pool, btrfs on a"
          + " BtrfsSubvolume pool (the only one such a pool serves); btrfs only there.")
  private FsType fsType;

  @JsonPropertyDescription("Reclaim policy of provisioned volumes.")
  @Default("Delete")
  private ReclaimPolicy reclaimPolicy = ReclaimPolicy.Delete;

  @JsonPropertyDescription("Volume binding mode; node-local storage wants WaitForFirstConsumer.")
  @Default("WaitForFirstConsumer")
  private BindingMode volumeBindingMode = BindingMode.WaitForFirstConsumer;

  @JsonPropertyDescription("Whether volumes may be expanded.")
  @Default("true")
  private Boolean allowVolumeExpansion = true;

  @JsonPropertyDescription("Mount options of volumes of this class.")
  @Size(max = 32)
  @ValidationRule(
      value = "self.all(o, o.size() <= 256 && o.matches('^[^\\\\s]+$'))",
      message = "each item must be a mount option without spaces, at most 256 characters")
  private List<String> mountOptions;

  @JsonPropertyDescription(
      "Make this the cluster's default class, unless another class already is (never stolen).")
  @JsonProperty("default")
  @Default("false")
  private Boolean defaultClass = false;

  @JsonPropertyDescription(
      "Encrypt the volumes of this class at rest, each with a key from a Secret. Unset: not"
          + " encrypted. Only on an ImageFile pool, with fsType ext4 or unset.")
  private EncryptionSpec encryption;

  public String getName() {
    return name;
  }

  public void setName(String name) {
    this.name = name;
  }

  public String getPool() {
    return pool;
  }

  public void setPool(String pool) {
    this.pool = pool;
  }

  public FsType getFsType() {
    return fsType;
  }

  public void setFsType(FsType fsType) {
    this.fsType = fsType;
  }

  public ReclaimPolicy getReclaimPolicy() {
    return reclaimPolicy;
  }

  public void setReclaimPolicy(ReclaimPolicy reclaimPolicy) {
    this.reclaimPolicy = reclaimPolicy;
  }

  public BindingMode getVolumeBindingMode() {
    return volumeBindingMode;
  }

  public void setVolumeBindingMode(BindingMode volumeBindingMode) {
    this.volumeBindingMode = volumeBindingMode;
  }

  public Boolean getAllowVolumeExpansion() {
    return allowVolumeExpansion;
  }

  public void setAllowVolumeExpansion(Boolean allowVolumeExpansion) {
    this.allowVolumeExpansion = allowVolumeExpansion;
  }

  public List<String> getMountOptions() {
    return mountOptions;
  }

  public void setMountOptions(List<String> mountOptions) {
    this.mountOptions = mountOptions;
  }

  @JsonProperty("default")
  public Boolean getDefaultClass() {
    return defaultClass;
  }

  @JsonProperty("default")
  public void setDefaultClass(Boolean defaultClass) {
    this.defaultClass = defaultClass;
  }

  public EncryptionSpec getEncryption() {
    return encryption;
  }

  public void setEncryption(EncryptionSpec encryption) {
    this.encryption = encryption;
  }

  /** PersistentVolume reclaim policies that make sense for provisioned volumes. */
  public enum ReclaimPolicy {
    Delete,
    Retain
  }

  /** StorageClass volume binding modes. */
  public enum BindingMode {
    WaitForFirstConsumer,
    Immediate
  }
}
