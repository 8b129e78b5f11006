package dev.soko.driver.volume;

import dev.soko.driver.mount.Mounter;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Filesystems frozen for the time of one or more copies, so that each copy holds everything written
 * before the freeze and nothing half way; frozen together, they hold one instant. Closing thaws
 * them, the last frozen first. A freeze that fails thaws the ones already frozen before it reports
 * the failure: no filesystem stays frozen behind an error, since every write to it would hang.
 */
final class FrozenFilesystems implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(FrozenFilesystems.class);

  private final Mounter mounter;
  private final Deque<Path> frozen = new ArrayDeque<>();

  private FrozenFilesystems(Mounter mounter) {
    this.mounter = mounter;
  }

  /** Freezes {@code mountPoints} in order; on failure none of them is left frozen. */
  static FrozenFilesystems freeze(Mounter mounter, List<Path> mountPoints) {
    FrozenFilesystems all = new FrozenFilesystems(mounter);
    try {
      for (Path mountPoint : mountPoints) {
        mounter.freeze(mountPoint);
        all.frozen.push(mountPoint);
      }
    } catch (RuntimeException e) {
      try {
        all.close();
      } catch (RuntimeException thaw) {
        e.addSuppressed(thaw);
      }
      throw e;
    }
    return all;
  }

  /**
   * Thaws every filesystem, the last frozen first. One that cannot be thawed does not keep the
   * others frozen: all are tried, then the first failure is thrown (the copy then fails).
   */
  @Override
  public void close() {
    RuntimeException first = null;
    while (!frozen.isEmpty()) {
      Path mountPoint = frozen.pop();
      try {
        mounter.unfreeze(mountPoint);
      } catch (RuntimeException e) {
        LOG.error("cannot unfreeze {}: {}", mountPoint, e.getMessage());
        if (first == null) {
          first = e;
        } else {
          first.addSuppressed(e);
        }
      }
    }
    if (first != null) {
      throw first;
    }
  }
}
