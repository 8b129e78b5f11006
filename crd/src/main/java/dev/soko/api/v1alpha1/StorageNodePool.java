package dev.soko.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/**
 * One pool on one node. The byte counts are physical (statfs of the pool's filesystem) except
 * {@code provisionedBytes}, the sum of what volumes and snapshots reserve, and {@code
 * headroomBytes}, what a new volume can get (what GetCapacity answers). Bytes are unset when the
 * pool is not open on the node.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
    value = "self.state != 'Refused' || has(self.message)",
    message = "a Refused pool says why in message")
public record StorageNodePool(
    @JsonPropertyDescription("Pool name, as in the StorageCluster's spec.pools.")
        @Required
        @Size(max = 63)
        String name,
    @JsonPropertyDescription(
            "Ready (in use), Refused (failed a check: missing, not a mount point, on the root"
                + " filesystem; for a BtrfsSubvolume pool also not on btrfs, or quotas off) or"
                + " NotSelected (not configured for this node).")
        @Required
        @Pattern("^(Ready|Refused|NotSelected)$")
        String state,
    @JsonPropertyDescription("Why the pool is not Ready, one sentence.") @Size(max = 1024)
        String message,
    @JsonPropertyDescription("Size of the pool's filesystem.") @Min(0) Long sizeBytes,
    @JsonPropertyDescription("Bytes used on the pool's filesystem, by anyone.") @Min(0)
        Long usedBytes,
    @JsonPropertyDescription("Bytes reserved by the pool's volumes and snapshots.") @Min(0)
        Long provisionedBytes,
    @JsonPropertyDescription(
            "Bytes a new volume can get: the lower of the logical headroom and the free space.")
        @Min(0)
        Long headroomBytes,
    @JsonPropertyDescription("Volumes in the pool.") @Min(0) Integer volumes) {
  public static final String READY = "Ready";
  public static final String REFUSED = "Refused";
  public static final String NOT_SELECTED = "NotSelected";
}
