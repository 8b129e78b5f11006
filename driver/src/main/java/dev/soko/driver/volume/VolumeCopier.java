package dev.soko.driver.volume;

import dev.soko.driver.backend.Backends;
import dev.soko.driver.backend.VolumeBackend;
import dev.soko.driver.mount.Mounter;
import dev.soko.driver.pool.Pool;
import dev.soko.driver.state.VolumeRecord;
import java.nio.file.Path;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Copies a volume or snapshot for snapshots, clones and restores, through the backend. When the
 * source is a staged filesystem volume its filesystem is frozen during the copy, so the copy is
 * consistent (everything written before the freeze is in it) instead of catching a write half way.
 */
final class VolumeCopier {
  private static final Logger LOG = LoggerFactory.getLogger(VolumeCopier.class);
  private final Mounter mounter;
  private final Backends backends;
  private final Presentations presentations;

  VolumeCopier(Mounter mounter, Backends backends, Presentations presentations) {
    this.presentations = presentations;
    this.mounter = mounter;
    this.backends = backends;
  }

  /** What a copy becomes: a snapshot never changes, a clone is a volume of its own. */
  enum Kind {
    CLONE,
    SNAPSHOT
  }

  void copyVolume(
      VolumeRecord source, Path sourceImage, Path target, Pool targetPool, boolean same) {
    copyVolume(source, sourceImage, target, targetPool, same, Kind.CLONE);
  }

  /**
   * Copies a volume within its pool or (for image files) into another; callers have refused the
   * copies a backend cannot make, so the target pool's backend is the source's too.
   */
  void copyVolume(
      VolumeRecord source,
      Path sourceImage,
      Path target,
      Pool targetPool,
      boolean same,
      Kind kind) {
    VolumeBackend backend = backends.of(targetPool);
    Optional<Path> frozen = presentations.of(targetPool).toFreeze(source, sourceImage);
    if (frozen.isPresent()) {
      mounter.freeze(frozen.get());
    }
    try {
      if (kind == Kind.SNAPSHOT) {
        backend.snapshot(targetPool, sourceImage, target);
      } else {
        copy(sourceImage, target, targetPool, same);
      }
    } finally {
      if (frozen.isPresent()) {
        try {
          mounter.unfreeze(frozen.get());
        } catch (RuntimeException e) {
          LOG.error("cannot unfreeze {}: {}", frozen.get(), e.getMessage());
          throw e;
        }
      }
    }
  }

  /** Copies within one pool as a reflink where possible; across pools always as a sparse copy. */
  void copy(Path sourceImage, Path target, Pool targetPool, boolean samePool) {
    backends.of(targetPool).copy(targetPool, sourceImage, target, samePool);
  }
}
