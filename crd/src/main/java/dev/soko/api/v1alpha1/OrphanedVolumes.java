package dev.soko.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.List;

/**
 * PersistentVolumes of the driver bound to a Node that no longer exists, bounded: at most {@link
 * #LIMIT} volumes and nodes are listed, {@code count} and {@code more} say how many there are.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record OrphanedVolumes(
    @JsonPropertyDescription("Orphaned PersistentVolumes in all.") Integer count,
    @JsonPropertyDescription("Missing Nodes that have orphaned volumes (at most 20, sorted).")
        List<String> nodes,
    @JsonPropertyDescription("The first orphaned volumes (at most 20, soonest action first).")
        List<OrphanedVolume> volumes,
    @JsonPropertyDescription("Orphaned volumes not listed in volumes.") Integer more) {
  public static final int LIMIT = 20;
}
