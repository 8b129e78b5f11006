package dev.soko.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/**
 * One spec pool across the installation, from the nodes' StorageNode reports: how many nodes have
 * it in each state, and the sums over the nodes that report numbers for it. Counts, so the entry
 * does not grow with the cluster.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record PoolSummaryStatus(
    @JsonPropertyDescription("Pool name, as in spec.pools.") String pool,
    @JsonPropertyDescription("Nodes where the pool is Ready.") Integer ready,
    @JsonPropertyDescription(
            "Nodes that refused the pool (missing directory, not a mount point, on the root"
                + " filesystem; for a BtrfsSubvolume pool also not on btrfs, or quotas off);"
                + " status.pools and the Degraded condition say why.")
        Integer refused,
    @JsonPropertyDescription("Nodes the pool is not configured for.") Integer notSelected,
    @JsonPropertyDescription(
            "Nodes that run the node plugin, or reported before, without a fresh report of the"
                + " pool (none for 3 minutes: the driver writes every minute).")
        Integer notReporting,
    @JsonPropertyDescription("Sum of the pool filesystems' sizes.") Long sizeBytes,
    @JsonPropertyDescription("Sum of the bytes used on the pool filesystems.") Long usedBytes,
    @JsonPropertyDescription("Sum of the bytes reserved by the pool's volumes and snapshots.")
        Long provisionedBytes,
    @JsonPropertyDescription("Volumes in the pool, on all nodes.") Integer volumes) {}
