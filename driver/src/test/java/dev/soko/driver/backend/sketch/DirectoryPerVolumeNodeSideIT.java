package dev.soko.driver.backend.sketch;

import dev.soko.driver.backend.NodeSideContract;
import dev.soko.driver.backend.VolumeBackend;
import dev.soko.driver.config.PoolConfig;

/**
 * The node-side contract for the sketch backend, its directories bind-mounted from a temporary
 * directory: a new backend's node side proves itself here too. Needs root; fails without it.
 */
class DirectoryPerVolumeNodeSideIT extends NodeSideContract {
  @Override
  protected PoolConfig.Backend kind() {
    return PoolConfig.Backend.BTRFS_SUBVOLUME;
  }

  @Override
  protected VolumeBackend backend() {
    return new DirectoryPerVolumeBackend();
  }
}
