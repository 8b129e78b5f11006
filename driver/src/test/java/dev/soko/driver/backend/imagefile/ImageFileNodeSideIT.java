package dev.soko.driver.backend.imagefile;

import dev.soko.driver.backend.BackendUnderTest;
import dev.soko.driver.backend.NodeSideContract;
import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.exec.ProcessExec;
import dev.soko.driver.mount.Losetup;
import dev.soko.driver.sys.LinuxSyscalls;

/**
 * The node-side contract for image files on real loop devices, as ext4, xfs and raw block volumes.
 * Needs root and loop devices; fails without them.
 */
class ImageFileNodeSideIT extends NodeSideContract {
  @Override
  protected BackendUnderTest subject() {
    return new BackendUnderTest(
        PoolConfig.Backend.IMAGE_FILE,
        () -> new ImageFileBackend(new ProcessExec(), new Losetup(), new LinuxSyscalls()));
  }
}
