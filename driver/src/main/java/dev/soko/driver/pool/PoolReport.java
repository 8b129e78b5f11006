package dev.soko.driver.pool;

import dev.soko.driver.model.PoolCapacity;

/**
 * One reading of a pool: its filesystem (physical) and its accounting (logical).
 *
 * @param totalBytes logical capacity: the pool's size times its over-provisioning ratio
 * @param provisionedBytes the sum of the sizes reserved by volumes and snapshots
 * @param headroomBytes what a new volume can get now: the lower of the logical headroom and the
 *     physical free space (what GetCapacity answers)
 */
public record PoolReport(
    String pool, PoolUsage usage, long totalBytes, long provisionedBytes, long headroomBytes) {

  /** True when the disk, not the accounting, limits what the pool offers. */
  public boolean physicallyLimited() {
    return usage.availableBytes() < totalBytes - provisionedBytes;
  }

  public PoolCapacity capacity() {
    return new PoolCapacity(pool, totalBytes, headroomBytes, headroomBytes / Sizes.MIB * Sizes.MIB);
  }
}
