package dev.soko.driver.volume;

import dev.soko.driver.backend.Backends;
import dev.soko.driver.backend.StorageTraits;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.mount.MountOptions;
import dev.soko.driver.pool.Pool;

/**
 * The filesystem a new volume gets: none for a block volume, else the one asked for or the pool's
 * default, checked against what the pool's backend serves and what the pool offers.
 */
final class FilesystemChoice {
  private final Backends backends;

  FilesystemChoice(Backends backends) {
    this.backends = backends;
  }

  /** The filesystem type for {@code request} in {@code pool}; empty for a block volume. */
  String of(VolumeRequest request, Pool pool) {
    StorageTraits traits = backends.of(pool).traits();
    if (request.accessType() == AccessType.BLOCK) {
      if (!traits.blockVolumes()) {
        throw StorageException.invalid(
            "pool %s has backend %s, which serves filesystem volumes (%s) only; block volumes"
                + " need a pool with backend %s",
            pool.name(),
            traits.flagName(),
            String.join(", ", traits.fsTypes()),
            String.join(" or ", backends.servingBlockVolumes()));
      }
      return "";
    }
    String wanted = request.fsType() == null ? "" : request.fsType();
    if (wanted.isEmpty()) {
      wanted =
          pool.config().fsTypes().isEmpty()
              ? traits.defaultFsType()
              : pool.config().fsTypes().iterator().next();
    }
    if (!traits.formatsVolumes() && !traits.fsTypes().contains(wanted)) {
      // Its volumes are of the pool filesystem's own kind: there is no device to format.
      throw StorageException.invalid(
          "pool %s has backend %s, whose volumes have filesystem %s, not %s",
          pool.name(),
          traits.flagName(),
          String.join(", ", traits.fsTypes()),
          Catalog.shown(wanted));
    }
    if (traits.formatsVolumes()) {
      MountOptions.checkFsType(wanted);
    }
    if (!pool.config().fsTypes().isEmpty() && !pool.config().fsTypes().contains(wanted)) {
      throw StorageException.invalid(
          "pool %s does not offer filesystem %s (it offers %s)",
          pool.name(), wanted, pool.config().fsTypes());
    }
    return wanted;
  }
}
