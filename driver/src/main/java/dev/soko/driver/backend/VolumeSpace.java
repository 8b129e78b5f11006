package dev.soko.driver.backend;

/**
 * A directory volume's own numbers, where statfs would show the whole pool filesystem.
 *
 * @param usedBytes what the volume holds (for btrfs, the qgroup's referenced bytes)
 * @param limitBytes what it may hold (its capacity)
 */
public record VolumeSpace(long usedBytes, long limitBytes) {

  public long availableBytes() {
    return Math.max(0, limitBytes - usedBytes);
  }
}
