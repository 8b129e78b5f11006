package dev.soko.driver.volume;

import dev.soko.driver.backend.Backends;
import dev.soko.driver.backend.BlockDevices;
import dev.soko.driver.iolimit.IoLimits;
import dev.soko.driver.pool.Pool;
import dev.soko.driver.state.VolumeRecord;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A volume's mutable parameters (a VolumeAttributesClass's): its IO limits. Checked against the
 * volume's backend, because a limit needs a block device of the volume's own: an image-file volume
 * has its loop device; a btrfs subvolume shares the pool's device with every other volume, so no
 * per-volume block IO limit would be honest there and the parameters are refused. Kept in the
 * volume's record in plain numbers.
 */
@SuppressWarnings("try") // a KeyedLocks.Held is used only for its scope
final class VolumeAttributes {
  private static final Logger LOG = LoggerFactory.getLogger(VolumeAttributes.class);

  private final Catalog catalog;
  private final VolumeLocks locks;
  private final Backends backends;

  VolumeAttributes(Catalog catalog, VolumeLocks locks, Backends backends) {
    this.catalog = catalog;
    this.locks = locks;
    this.backends = backends;
  }

  /** {@code mutable} in plain numbers; INVALID_ARGUMENT when the pool's volumes cannot have it. */
  Map<String, String> check(Pool pool, Map<String, String> mutable) {
    if (mutable.isEmpty()) {
      return Map.of();
    }
    if (!(backends.of(pool).nodeSide() instanceof BlockDevices)) {
      throw StorageException.invalid(
          "IO limits need a block device of the volume's own; the volumes of pool %s (%s) share"
              + " the pool's device",
          pool.name(), backends.of(pool).traits().flagName());
    }
    try {
      return IoLimits.parse(mutable).parameters();
    } catch (IllegalArgumentException e) {
      throw StorageException.invalid("%s", e.getMessage());
    }
  }

  /** Replaces the volume's mutable parameters, durably; the limits now in force. */
  IoLimits modify(String volumeId, Map<String, String> mutable) {
    try (KeyedLocks.Held lock = locks.volume(volumeId)) {
      VolumeRecord record = catalog.readyVolume(volumeId);
      Map<String, String> checked = check(catalog.pool(record.pool()), mutable);
      if (!checked.equals(record.mutableParameters())) {
        catalog.saveVolume(record.withMutableParameters(checked));
        LOG.info("volume {}: mutable parameters now {}", volumeId, checked);
      }
      return IoLimits.parse(checked);
    }
  }

  /** The limits of a volume as recorded; none for a volume without mutable parameters. */
  IoLimits limits(String volumeId) {
    return catalog
        .volume(volumeId)
        .map(r -> IoLimits.parse(r.mutableParameters()))
        .orElse(IoLimits.NONE);
  }
}
