package dev.soko.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/**
 * One pool on one node. From the node's StorageNode report when it is fresh (then with its state
 * and physical numbers), otherwise from the CSIStorageCapacity the node's provisioner publishes
 * (then only {@code total} and {@code available}).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record PoolStatus(
    @JsonPropertyDescription("Node name.") String node,
    @JsonPropertyDescription("Pool name, as in spec.pools.") String pool,
    @JsonPropertyDescription(
            "The pool's spec.pools capacity; without one, the size of its filesystem when the node"
                + " reports it.")
        String total,
    @JsonPropertyDescription(
            "What a new volume can get on this node: the lower of the logical headroom and the"
                + " physical free space.")
        String available,
    @JsonPropertyDescription(
            "Ready or Refused, from the node's report; unset when the node has not reported.")
        String state,
    @JsonPropertyDescription("Why the pool is refused on this node.") String message,
    @JsonPropertyDescription("Size of the pool's filesystem.") Long sizeBytes,
    @JsonPropertyDescription("Bytes used on the pool's filesystem, by anyone.") Long usedBytes,
    @JsonPropertyDescription("Bytes reserved by the pool's volumes and snapshots.")
        Long provisionedBytes,
    @JsonPropertyDescription("Volumes in the pool on this node.") Integer volumes) {

  /** A pair known only from CSIStorageCapacity: no report, so no state or physical numbers. */
  public PoolStatus(String node, String pool, String total, String available) {
    this(node, pool, total, available, null, null, null, null, null, null);
  }
}
