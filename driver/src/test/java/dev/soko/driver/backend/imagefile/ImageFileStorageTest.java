package dev.soko.driver.backend.imagefile;

import dev.soko.driver.backend.BackendUnderTest;
import dev.soko.driver.backend.VolumeStorageContract;
import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.exec.ProcessExec;
import dev.soko.driver.mount.FakeLoopDevices;
import dev.soko.driver.sys.LinuxSyscalls;

/** The storage contract for image files, in a temporary directory (sparse files, real cp). */
class ImageFileStorageTest extends VolumeStorageContract {
  @Override
  protected BackendUnderTest subject() {
    return new BackendUnderTest(
        PoolConfig.Backend.IMAGE_FILE,
        () -> new ImageFileBackend(new ProcessExec(), new FakeLoopDevices(), new LinuxSyscalls()));
  }
}
