package dev.soko.driver;

import dev.soko.driver.config.DriverConfig;
import dev.soko.driver.pool.NodeLabels;
import dev.soko.driver.volume.LocalVolumeManager;
import dev.soko.driver.volume.VolumeManager;

/**
 * Opens the storage engine for a node-mode process. The one place that names the backend, so a
 * second one (central provisioning, DESIGN §2) plugs in here without touching the services.
 */
final class VolumeManagers {
  private VolumeManagers() {}

  static VolumeManager open(DriverConfig config, NodeLabels labels) {
    return LocalVolumeManager.open(config, labels);
  }
}
