package dev.soko.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** One PersistentVolume whose Node is gone, and what spec.nodeLoss does with it. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record OrphanedVolume(
    @JsonPropertyDescription("PersistentVolume name.") String pv,
    @JsonPropertyDescription("The bound claim as namespace/name; unset when unbound.") String pvc,
    @JsonPropertyDescription("The missing Node named by the volume's node affinity.") String node,
    @JsonPropertyDescription(
            "When the operator first saw the Node missing (with policy Delete: when it marked"
                + " the volume).")
        String since,
    @JsonPropertyDescription(
            "Retain (kept), Delete (will be deleted at 'at') or Deleting (claim and volume"
                + " deletion requested).")
        String action,
    @JsonPropertyDescription("When the deletion is due; set with action Delete and Deleting.")
        String at) {
  public static final String RETAIN = "Retain";
  public static final String DELETE = "Delete";
  public static final String DELETING = "Deleting";
}
