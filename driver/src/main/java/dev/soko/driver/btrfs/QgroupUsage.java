package dev.soko.driver.btrfs;

/**
 * A subvolume's qgroup numbers. The kernel updates them when a transaction commits (every 30 s by
 * default, or at sync), so a write of a moment ago may not show yet; the limit holds at once.
 *
 * @param referencedBytes every byte the subvolume references, shared extents included (a fresh
 *     clone references all of its source's data)
 * @param limitBytes the max-referenced limit, 0 when there is none
 */
public record QgroupUsage(long referencedBytes, long limitBytes) {}
