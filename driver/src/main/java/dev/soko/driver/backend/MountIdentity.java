package dev.soko.driver.backend;

import dev.soko.driver.mount.MountEntry;
import dev.soko.driver.mount.MountException;
import dev.soko.driver.pool.Pool;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * How mountinfo shows a mount of a directory volume: the pool filesystem's device ({@code
 * major:minor}, the same for every mount of that filesystem) and the volume directory's path from
 * the filesystem's root (the mount's {@code root} field, which a bind mount and a bind of a bind
 * keep). Both together tell this volume's mounts from the pool's own and from any other volume's.
 */
public record MountIdentity(String device, String root) {

  public boolean matches(MountEntry entry) {
    return entry.device().equals(device) && entry.root().equals(root);
  }

  /**
   * The identity of the directory volume at {@code location}, from the pool filesystem's mount that
   * holds it (the deepest mount point above it) and the location's path below that mount's root: a
   * mount of a subdirectory (a hostPath bind in a container, a {@code subvol=} mount) shows its own
   * root, which the path is joined to.
   */
  public static MountIdentity of(Pool pool, Path location, List<MountEntry> mounts) {
    Path real = realLocation(pool, location);
    MountEntry holder = null;
    for (MountEntry entry : mounts) {
      if (real.startsWith(entry.mountPoint())
          && (holder == null
              || entry.mountPoint().getNameCount() >= holder.mountPoint().getNameCount())) {
        holder = entry;
      }
    }
    if (holder == null) {
      throw MountException.failed("no mount holds pool " + pool.name() + " at " + real);
    }
    Path below = holder.mountPoint().relativize(real);
    Path root = Path.of(holder.root()).resolve(below);
    return new MountIdentity(holder.device(), root.toString());
  }

  /** The location with the pool directory's symbolic links resolved, as mountinfo shows paths. */
  private static Path realLocation(Pool pool, Path location) {
    Path poolDir = pool.config().path();
    try {
      return poolDir.toRealPath().resolve(poolDir.relativize(location));
    } catch (IOException e) {
      throw MountException.failed("cannot resolve pool directory " + poolDir + ": " + e, e);
    }
  }
}
