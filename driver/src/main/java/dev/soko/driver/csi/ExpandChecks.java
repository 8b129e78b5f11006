package dev.soko.driver.csi;

import csi.v1.Csi;
import dev.soko.driver.volume.StorageException;

/** Validation shared by the node-mode and controller-mode ControllerExpandVolume. */
final class ExpandChecks {
  private ExpandChecks() {}

  /** capacity_range is required for a controller expansion and must ask for some size. */
  static SizeRange requiredRange(Csi.ControllerExpandVolumeRequest request) {
    if (!request.hasCapacityRange()) {
      throw StorageException.invalid("capacity_range is required");
    }
    SizeRange size = SizeRange.of(request.getCapacityRange());
    if (size.target() == 0) {
      throw StorageException.invalid("capacity_range must set required_bytes or limit_bytes");
    }
    if (request.hasVolumeCapability()) {
      Capabilities.parse(request.getVolumeCapability());
    }
    return size;
  }
}
