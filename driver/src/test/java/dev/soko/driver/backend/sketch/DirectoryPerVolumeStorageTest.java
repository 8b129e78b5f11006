package dev.soko.driver.backend.sketch;

import dev.soko.driver.backend.VolumeBackend;
import dev.soko.driver.backend.VolumeStorageContract;
import dev.soko.driver.config.PoolConfig;

/**
 * The storage contract run against the sketch backend in a temporary directory: a new backend
 * proves itself here before the engine sees it, with no change in {@code csi/}, {@code volume/} or
 * {@code pool/}.
 */
class DirectoryPerVolumeStorageTest extends VolumeStorageContract {
  @Override
  protected PoolConfig.Backend kind() {
    return PoolConfig.Backend.BTRFS_SUBVOLUME;
  }

  @Override
  protected VolumeBackend backend() {
    return new DirectoryPerVolumeBackend();
  }
}
