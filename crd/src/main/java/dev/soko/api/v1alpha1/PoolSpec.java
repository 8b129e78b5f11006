package dev.soko.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.List;

/** A storage pool: a host directory on every node of the node plugin. */
@JsonInclude(JsonInclude.Include.NON_NULL)
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
      "Absolute, clean host directory holding the pool's volume images; one directory per pool,"
          + " not inside another pool's.")
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

  @JsonPropertyDescription("Filesystems volumes of this pool may use; all supported when empty.")
  @Size(max = 2)
  @ValidationRule(
      value = "self.all(a, self.exists_one(b, b == a))",
      message = "must not name a filesystem twice")
  private List<FsType> fsTypes;

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

  public List<FsType> getFsTypes() {
    return fsTypes;
  }

  public void setFsTypes(List<FsType> fsTypes) {
    this.fsTypes = fsTypes;
  }
}
