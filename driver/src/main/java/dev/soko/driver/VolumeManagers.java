package dev.soko.driver;

import dev.soko.driver.config.DriverConfig;
import dev.soko.driver.volume.VolumeManager;

/** Opens the storage engine for a node-mode process. */
final class VolumeManagers {
  private VolumeManagers() {}

  static VolumeManager open(DriverConfig config) {
    throw new IllegalStateException(
        "node mode needs the storage engine (LocalVolumeManager), which this build does not"
            + " contain yet");
  }
}
