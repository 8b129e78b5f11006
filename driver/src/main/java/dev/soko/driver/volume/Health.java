package dev.soko.driver.volume;

import dev.soko.driver.backend.AttachedDevice;
import dev.soko.driver.backend.Backends;
import dev.soko.driver.backend.VolumeBackend;
import dev.soko.driver.model.VolumeCondition;
import dev.soko.driver.mount.MountEntry;
import dev.soko.driver.mount.Mounter;
import dev.soko.driver.pool.Pool;
import dev.soko.driver.state.VolumeRecord;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/** Works out volume conditions from what is really attached and mounted. */
final class Health {
  private final Catalog catalog;
  private final Mounter mounter;
  private final Backends backends;
  private final Presentations presentations;

  Health(Catalog catalog, Mounter mounter, Backends backends, Presentations presentations) {
    this.catalog = catalog;
    this.mounter = mounter;
    this.backends = backends;
    this.presentations = presentations;
  }

  /** Takes one look at loop devices and mounts, for a whole listing. */
  View view() {
    return new View(backends.inventory(), mounter.mounts());
  }

  /** True when {@code entry} mounts {@code device}: directly, or as a bind of its device node. */
  static boolean mounts(MountEntry entry, String device) {
    if (entry.source().equals(device)) {
      return true;
    }
    String node = "/" + Path.of(device).getFileName();
    return entry.fsType().equals("devtmpfs") && entry.root().equals(node);
  }

  /** True when {@code entry} mounts any of {@code devices}. */
  static boolean mountsAny(MountEntry entry, List<String> devices) {
    return devices.stream().anyMatch(device -> mounts(entry, device));
  }

  final class View {
    private final List<AttachedDevice> devices;
    private final List<MountEntry> mountTable;

    View(List<AttachedDevice> devices, List<MountEntry> mountTable) {
      this.devices = devices;
      this.mountTable = mountTable;
    }

    /** Every attached device, as the look found them. */
    List<AttachedDevice> devices() {
      return devices;
    }

    Optional<MountEntry> mountAt(Path path) {
      MountEntry found = null;
      for (MountEntry entry : mountTable) {
        if (entry.mountPoint().equals(path)) {
          found = entry;
        }
      }
      return Optional.ofNullable(found);
    }

    VolumeCondition condition(VolumeRecord record) {
      return condition(record, catalog.location(record));
    }

    VolumeCondition condition(VolumeRecord record, Path image) {
      return condition(catalog.pool(record.pool()), record, image);
    }

    /** The condition of a volume of {@code pool}, which recovery asks before the pool is open. */
    VolumeCondition condition(Pool pool, VolumeRecord record, Path image) {
      VolumeBackend backend = backends.of(pool);
      if (!backend.exists(image)) {
        return new VolumeCondition(
            true, "the volume's " + backend.traits().storageNoun() + " is missing from its pool");
      }
      if (record.stagedAt().isEmpty()) {
        return VolumeCondition.HEALTHY;
      }
      return presentations.of(pool).stagedCondition(this, pool, record, image);
    }
  }
}
