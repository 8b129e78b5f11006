package dev.soko.driver.backend.btrfs;

import dev.soko.driver.backend.BackendUnderTest;
import dev.soko.driver.backend.NodeSideContract;

/**
 * The node-side contract for btrfs subvolumes, bind-mounted from a real btrfs with quotas ({@link
 * BtrfsScratch}). Needs root and btrfs-progs; fails without them.
 */
class BtrfsNodeSideIT extends NodeSideContract {
  @Override
  protected BackendUnderTest subject() {
    return BtrfsScratch.BACKEND;
  }
}
