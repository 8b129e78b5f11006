package dev.soko.driver.backend.btrfs;

import dev.soko.driver.backend.PoolDirectories;
import dev.soko.driver.backend.VolumeBackend;
import dev.soko.driver.backend.VolumeStorageContract;
import dev.soko.driver.btrfs.Btrfs;
import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.exec.ProcessExec;

/**
 * The storage contract for btrfs subvolumes, on a real btrfs with quotas enabled ({@link
 * BtrfsScratch}); each pool is a directory on it. Needs root and btrfs-progs; fails without them.
 */
class BtrfsStorageContractIT extends VolumeStorageContract {

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
