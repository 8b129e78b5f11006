package dev.soko.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/**
 * What happens to this driver's PersistentVolumes when the Node they are bound to is deleted (an
 * autoscaler, a spot reclaim, a decommissioned machine).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class NodeLossSpec {
  public static final String DEFAULT_DELETE_AFTER = "1h";

  /** The shortest delay: below it a Node that is replaced under its name is not worth racing. */
  public static final String MIN_DELETE_AFTER = "30s";

  /** The longest delay; longer than a year is Retain. */
  public static final String MAX_DELETE_AFTER = "8760h";

  /** Go-style durations of hours, minutes and seconds, as CEL's duration() reads them. */
  public static final String DURATION_PATTERN = "^([0-9]{1,5}(h|m|s))+$";

  @JsonPropertyDescription(
      "Retain: the volumes of a deleted Node are kept and reported in status.orphanedVolumes and"
          + " in events; a Node that comes back under the same name, with its pool, serves them"
          + " again. Delete: after deleteAfter, the PersistentVolumeClaim bound to each such"
          + " volume and the PersistentVolume are deleted, so that a StatefulSet recreates the"
          + " claim on another node; a volume whose reclaimPolicy is Retain is always kept.")
  @Default("Retain")
  private Policy policy = Policy.Retain;

  @JsonPropertyDescription(
      "With policy Delete: how long a Node must stay deleted before its volumes are deleted,"
          + " e.g. 30m, 1h or 1h30m (at least 30s, at most 8760h). A Node that comes back earlier"
          + " cancels the deletion. The clock starts when the operator first sees the Node"
          + " missing, or when policy becomes Delete.")
  @Default(DEFAULT_DELETE_AFTER)
  @Size(max = 24)
  @ValidationRule(
      value = "self.matches('" + DURATION_PATTERN + "')",
      message = "spec.nodeLoss.deleteAfter must be a duration such as 30m, 1h or 1h30m")
  @ValidationRule(
      value =
          "!self.matches('"
              + DURATION_PATTERN
              + "') || (duration(self) >= duration('"
              + MIN_DELETE_AFTER
              + "') && duration(self) <= duration('"
              + MAX_DELETE_AFTER
              + "'))",
      message = "spec.nodeLoss.deleteAfter must be between 30s and 8760h")
  private String deleteAfter = DEFAULT_DELETE_AFTER;

  public Policy getPolicy() {
    return policy;
  }

  public void setPolicy(Policy policy) {
    this.policy = policy;
  }

  public String getDeleteAfter() {
    return deleteAfter;
  }

  public void setDeleteAfter(String deleteAfter) {
    this.deleteAfter = deleteAfter;
  }

  /** What to do with the volumes of a deleted Node. */
  public enum Policy {
    /** Keep them, report them; a Node recreated under the same name finds them again. */
    Retain,
    /** Delete their claims and the volumes after deleteAfter. */
    Delete
  }
}
