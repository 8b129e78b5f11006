package dev.soko.driver.backend.btrfs;

import dev.soko.driver.backend.NodeSideContract;
import dev.soko.driver.backend.PoolDirectories;
import dev.soko.driver.backend.VolumeBackend;
import dev.soko.driver.btrfs.Btrfs;
import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.exec.ProcessExec;

/**
 * The node-side contract for btrfs subvolumes, bind-mounted from a real btrfs with quotas ({@link
 * BtrfsScratch}). Needs root and btrfs-progs; fails without them.
 */
class BtrfsNodeSideIT extends NodeSideContract {
  @Override
  protected PoolConfig.Backend kind() {
    return PoolConfig.Backend.BTRFS_SUBVOLUME;
  }

  @Override
  protected VolumeBackend backend() {
    return new BtrfsSubvolumeBackend(new Btrfs(new ProcessExec()));
  }

  @Override
  protected PoolDirectories pools() {
    return new BtrfsScratch();
  }
}
