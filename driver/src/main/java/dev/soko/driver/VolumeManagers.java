package dev.soko.driver;

import dev.soko.driver.config.DriverConfig;
import dev.soko.driver.iolimit.CgroupThrottle;
import dev.soko.driver.iolimit.PodThrottles;
import dev.soko.driver.nri.NriPlugin;
import dev.soko.driver.pool.NodeLabels;
import dev.soko.driver.volume.LocalVolumeManager;
import dev.soko.driver.volume.RemoteSnapshots;
import dev.soko.driver.volume.VolumeManager;
import java.io.IOException;
import java.nio.file.Path;
import org.slf4j.LoggerFactory;

/**
 * Opens the storage engine for a node-mode process. The one place that names the backend, so a
 * second one (central provisioning, DESIGN §2) plugs in here without touching the services.
 */
final class VolumeManagers {
  private VolumeManagers() {}

  static final Path CGROUP_FS = Path.of("/sys/fs/cgroup");

  /**
   * The engine, applying volumes' IO limits to pods when this node has a block IO controller (the
   * node plugin mounts the host's cgroup filesystem at {@link #CGROUP_FS}); without one, limits are
   * kept in the volumes' records but not applied, and the log says so once. A restore of a snapshot
   * this node does not hold copies it from the node {@code remote} finds. With an NRI socket
   * configured, a plugin there writes a pod's limits into each of its containers' cgroups before
   * the container runs; its threads end with the process, whose socket the runtime then sees close.
   */
  static VolumeManager open(DriverConfig config, NodeLabels labels, RemoteSnapshots remote) {
    LocalVolumeManager engine = LocalVolumeManager.open(config, labels, remote);
    try {
      PodThrottles throttles =
          new PodThrottles(CgroupThrottle.detect(CGROUP_FS), PodThrottles.PERIOD);
      engine.limitIo(throttles);
      config
          .nriSocket()
          .ifPresent(
              socket ->
                  new NriPlugin(
                          socket,
                          "soko-io-limits",
                          "50",
                          (pod, container) -> throttles.containerStarting(pod.getUid()))
                      .start());
    } catch (IOException e) {
      LoggerFactory.getLogger(VolumeManagers.class)
          .warn("volumes' IO limits are kept but not applied on this node: {}", e.getMessage());
    }
    return engine;
  }
}
