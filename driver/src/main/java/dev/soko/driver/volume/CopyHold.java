package dev.soko.driver.volume;

import java.nio.file.Path;
import java.util.Optional;

/**
 * How a volume is kept from changing while it is copied, as its presentation sees it now: a staged
 * filesystem is frozen; a volume nothing has attached or mounted has no writer, and the caller's
 * lock on it keeps it so (staging takes the same lock); a volume in use with no filesystem of its
 * own to freeze cannot be kept still, and says why.
 */
sealed interface CopyHold {

  /** The filesystem to freeze, when freezing is how this volume is kept still. */
  default Optional<Path> toFreeze() {
    return Optional.empty();
  }

  /** Why the volume cannot be kept still while it is copied, when it cannot. */
  default Optional<String> unfreezable() {
    return Optional.empty();
  }

  /** A staged filesystem, frozen at {@code mountPoint}. */
  record Freeze(Path mountPoint) implements CopyHold {
    @Override
    public Optional<Path> toFreeze() {
      return Optional.of(mountPoint);
    }
  }

  /** Neither attached nor mounted: nothing writes to it while the caller holds its lock. */
  record Unused() implements CopyHold {}

  /** In use, and nothing can freeze it, for the reason given. */
  record Unfreezable(String why) implements CopyHold {
    @Override
    public Optional<String> unfreezable() {
      return Optional.of(why);
    }
  }
}
