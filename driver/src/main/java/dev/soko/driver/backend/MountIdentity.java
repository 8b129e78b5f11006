package dev.soko.driver.backend;

import dev.soko.driver.mount.MountEntry;

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
}
