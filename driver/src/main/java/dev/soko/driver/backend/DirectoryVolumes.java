package dev.soko.driver.backend;

import dev.soko.driver.pool.Pool;
import java.nio.file.Path;

/**
 * The node side of a backend whose volumes are directories on the pool's own filesystem: a volume
 * is never attached and holds no filesystem of its own; staging bind-mounts its directory (the
 * {@code location}) and publishing binds the staging path, so the volume layer finds the volume's
 * mounts by {@link MountIdentity} instead of by device. Its capacity is the backend's limit, which
 * an expansion raises at once: there is nothing to grow on the node.
 */
public non-sealed interface DirectoryVolumes extends NodeSide {

  /** How mountinfo shows mounts of the volume at {@code location}. */
  MountIdentity identity(Pool pool, Path location);

  /** True when the volume is mounted anywhere on this host (staged or published). */
  boolean mounted(Pool pool, Path location);

  /** The volume's use against its limit. */
  VolumeSpace space(Pool pool, Path location);
}
