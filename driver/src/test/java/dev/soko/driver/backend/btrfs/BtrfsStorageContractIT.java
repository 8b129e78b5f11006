package dev.soko.driver.backend.btrfs;

import dev.soko.driver.backend.BackendUnderTest;
import dev.soko.driver.backend.VolumeStorageContract;

/**
 * The storage contract for btrfs subvolumes, on a real btrfs with quotas enabled ({@link
 * BtrfsScratch}); each pool is a directory on it. Needs root and btrfs-progs; fails without them.
 */
class BtrfsStorageContractIT extends VolumeStorageContract {
  @Override
  protected BackendUnderTest subject() {
    return BtrfsScratch.BACKEND;
  }
}
