package dev.soko.driver.volume;

import dev.soko.driver.backend.AttachedDevice;
import dev.soko.driver.mount.MountEntry;
import dev.soko.driver.pool.Pool;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link Recovery}'s look at the devices attached to the pool's storage: one whose storage backs no
 * READY volume is detached, unless something still mounts it, which is an operator's call and said
 * loudly.
 */
final class StaleDevices {
  // Recovery's logger for every step: the start-up repairs read, and filter, as one report.
  private static final Logger LOG = LoggerFactory.getLogger(Recovery.class);

  private final Presentations presentations;

  StaleDevices(Presentations presentations) {
    this.presentations = presentations;
  }

  /**
   * Detaches the devices of {@code held} (each with the storage it is backed by) that back no
   * volume of {@code tally}; returns how many it detached.
   */
  int detach(
      Pool pool, Map<AttachedDevice, Path> held, RecoveryTally tally, List<MountEntry> mounts) {
    int detached = 0;
    for (Map.Entry<AttachedDevice, Path> entry : held.entrySet()) {
      AttachedDevice attached = entry.getKey();
      if (!attached.backingDeleted() && tally.liveVolumeLocations.contains(entry.getValue())) {
        continue;
      }
      List<Path> users =
          mounts.stream()
              .filter(m -> Health.mounts(m, attached.device()))
              .map(MountEntry::mountPoint)
              .toList();
      if (!users.isEmpty()) {
        // Detaching would only mark it to clear on last close; unmounting a workload's data is
        // not recovery's call. Say so loudly instead.
        tally.devicesInUse++;
        LOG.error(
            "recovery: {} backs no volume but is still mounted at {}; left for an operator",
            attached.device(),
            users);
        continue;
      }
      try {
        presentations.of(pool).detach(attached.device());
        detached++;
        LOG.warn(
            "recovery: detached {} (its image {} backs no volume)",
            attached.device(),
            entry.getValue());
      } catch (RuntimeException e) {
        LOG.error("recovery: cannot detach stale {}: {}", attached.device(), e.getMessage());
      }
    }
    return detached;
  }
}
