package dev.soko.driver.csi;

import csi.v1.Csi;
import dev.soko.driver.volume.StorageException;

/**
 * A validated {@code CapacityRange}: both bounds non-negative, the limit (when set) not below the
 * requirement. 0 means "not set" for either bound, as in the spec.
 */
record SizeRange(long requiredBytes, long limitBytes) {
  static final SizeRange UNSET = new SizeRange(0, 0);

  static SizeRange of(Csi.CapacityRange range) {
    long required = range.getRequiredBytes();
    long limit = range.getLimitBytes();
    if (required < 0 || limit < 0) {
      throw StorageException.invalid(
          "capacity_range bounds must not be negative (required_bytes=%d, limit_bytes=%d)",
          required, limit);
    }
    if (limit > 0 && required > limit) {
      throw StorageException.invalid(
          "capacity_range required_bytes=%d is above limit_bytes=%d", required, limit);
    }
    return new SizeRange(required, limit);
  }

  /** The size an expansion asks for: the requirement, or the limit when only that is given. */
  long target() {
    return requiredBytes > 0 ? requiredBytes : limitBytes;
  }
}
