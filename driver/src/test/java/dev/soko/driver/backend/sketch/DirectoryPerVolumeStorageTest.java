package dev.soko.driver.backend.sketch;

import dev.soko.driver.backend.BackendUnderTest;
import dev.soko.driver.backend.VolumeStorageContract;
import dev.soko.driver.config.PoolConfig;

/**
 * The storage contract run against the sketch backend in a temporary directory: a new backend
 * proves itself here before the engine sees it, with no change in {@code csi/}, {@code volume/} or
 * {@code pool/}.
 */
class DirectoryPerVolumeStorageTest extends VolumeStorageContract {
  /** The sketch, under the row it borrows (see {@link DirectoryPerVolumeBackend}). */
  static final BackendUnderTest SKETCH =
      new BackendUnderTest(PoolConfig.Backend.BTRFS_SUBVOLUME, DirectoryPerVolumeBackend::new);

  @Override
  protected BackendUnderTest subject() {
    return SKETCH;
  }
}
