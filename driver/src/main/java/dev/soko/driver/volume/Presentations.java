package dev.soko.driver.volume;

import dev.soko.driver.backend.Backends;
import dev.soko.driver.backend.BlockDevices;
import dev.soko.driver.backend.DirectoryVolumes;
import dev.soko.driver.backend.VolumeBackend;
import dev.soko.driver.mount.Mounter;
import dev.soko.driver.mount.PathPolicy;
import dev.soko.driver.pool.Pool;
import dev.soko.driver.state.VolumeRecord;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.function.Predicate;

/**
 * Each pool's {@link Presentation}, the one its backend's node side asks for. The only place in the
 * volume layer that tells block devices from directories; a new backend of either kind changes
 * nothing here.
 */
final class Presentations {
  private final Backends backends;
  private final Catalog catalog;
  private final Mounter mounter;
  private final PathPolicy paths;
  private final Predicate<VolumeRecord> stayMounted;
  private final Map<VolumeBackend, Presentation> made = new IdentityHashMap<>();

  /**
   * @param stayMounted whether a volume's staging mount must never be taken down while it is staged
   *     (its attributes keep state in it), so that its filesystem grows online
   */
  Presentations(
      Backends backends,
      Catalog catalog,
      Mounter mounter,
      PathPolicy paths,
      Predicate<VolumeRecord> stayMounted) {
    this.stayMounted = stayMounted;
    this.backends = backends;
    this.catalog = catalog;
    this.mounter = mounter;
    this.paths = paths;
  }

  Presentation of(Pool pool) {
    VolumeBackend backend = backends.of(pool);
    synchronized (made) {
      return made.computeIfAbsent(backend, this::make);
    }
  }

  private Presentation make(VolumeBackend backend) {
    // NodeSide is sealed: these are all the kinds there are.
    if (backend.nodeSide() instanceof BlockDevices devices) {
      return new BlockPresentation(catalog, mounter, paths, backend, devices, stayMounted);
    }
    return new DirectoryPresentation(catalog, mounter, (DirectoryVolumes) backend.nodeSide());
  }
}
