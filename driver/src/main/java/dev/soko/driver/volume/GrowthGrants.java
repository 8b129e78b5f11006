package dev.soko.driver.volume;

import dev.soko.driver.pool.Pool;
import dev.soko.driver.pool.PoolException;
import dev.soko.driver.pool.Sizes;
import dev.soko.driver.state.VolumeRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one check and reservation of a volume's growth, shared by every path that grows one:
 * ControllerExpandVolume ({@link VolumeProvisioner}), the growth handed to the node at once ({@link
 * ImmediateGrowth}) and NodeExpandVolume ({@link NodeExpansion}).
 */
final class GrowthGrants {
  private static final Logger LOG = LoggerFactory.getLogger(GrowthGrants.class);

  private final Catalog catalog;

  GrowthGrants(Catalog catalog) {
    this.catalog = catalog;
  }

  /**
   * Checks a growth request against the volume and reserves the new size in its pool; returns the
   * volume's capacity afterwards. A request above the recorded requested capacity is recorded even
   * when the floor-rounded capacity already covers it, so that a snapshot taken afterwards reports
   * the claim's new size. Callers hold the volume's lock.
   */
  long grant(VolumeRecord record, long requiredBytes, long limitBytes) {
    if (requiredBytes <= 0 && limitBytes <= 0) {
      throw StorageException.invalid("a capacity range is required to expand a volume");
    }
    if (limitBytes > 0 && limitBytes < record.capacityBytes()) {
      throw StorageException.outOfRange(
          "volume %s has %d bytes; volumes cannot shrink to %d",
          record.id(), record.capacityBytes(), limitBytes);
    }
    long minimum = Sizes.minimumFor(record.accessType(), record.fsType());
    long size = Sizes.resolve(Math.max(requiredBytes, record.capacityBytes()), limitBytes, minimum);
    long requested = Math.max(record.requestedBytes(), requiredBytes);
    if (size <= record.capacityBytes()) {
      if (requested > record.requestedBytes()) {
        saveGrowth(record, record.capacityBytes(), requested);
      }
      return record.capacityBytes();
    }
    Pool pool = catalog.pool(record.pool());
    reserveGrowth(pool, record, size, requiredBytes > 0 ? requiredBytes : limitBytes);
    try {
      saveGrowth(record, size, requested);
    } catch (RuntimeException e) {
      pool.reserve(record.id(), record.capacityBytes());
      throw e;
    }
    LOG.info("volume {} grows from {} to {} bytes", record.id(), record.capacityBytes(), size);
    return size;
  }

  /**
   * Reserves a growth in the pool. A pool without the room is OUT_OF_RANGE on every path (the
   * controller's, the node's at once, the kubelet's NodeExpandVolume): the code external-resizer
   * takes as infeasible, so a user may lower the request back, where RESOURCE_EXHAUSTED would be
   * retried forever.
   */
  private static void reserveGrowth(Pool pool, VolumeRecord record, long size, long asked) {
    try {
      pool.reserve(record.id(), size);
    } catch (PoolException e) {
      if (e.kind() != PoolException.Kind.NO_SPACE) {
        throw e;
      }
      throw StorageException.outOfRange(
          "volume %s cannot grow from %d bytes to %d: %s; it stays usable at %d bytes",
          record.id(), record.capacityBytes(), asked, e.getMessage(), record.capacityBytes());
    }
  }

  private void saveGrowth(VolumeRecord record, long capacity, long requested) {
    try {
      catalog.saveVolume(record.withCapacity(capacity, requested));
    } catch (RuntimeException e) {
      throw StorageException.wrap("cannot record the new size", e);
    }
  }
}
