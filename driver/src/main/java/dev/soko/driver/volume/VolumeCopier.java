package dev.soko.driver.volume;

import dev.soko.driver.backend.VolumeBackend;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.mount.Mounter;
import dev.soko.driver.pool.Pool;
import dev.soko.driver.state.VolumeRecord;
import java.nio.file.Path;
import java.util.List;
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
  private final VolumeBackend backend;

  VolumeCopier(Mounter mounter, VolumeBackend backend) {
    this.mounter = mounter;
    this.backend = backend;
  }

  void copyVolume(
      VolumeRecord source, Path sourceImage, Path target, Pool targetPool, boolean same) {
    Optional<Path> frozen = Optional.empty();
    if (source.accessType() == AccessType.FILESYSTEM && !source.stagedAt().isEmpty()) {
      Path staging = Path.of(source.stagedAt());
      // Only this volume's own filesystem: a stale record must not freeze whatever is mounted
      // at that path now.
      List<String> devices = backend.devices(sourceImage);
      boolean staged =
          mounter.mountAt(staging).filter(m -> Health.mountsAny(m, devices)).isPresent();
      if (staged) {
        mounter.freeze(staging);
        frozen = Optional.of(staging);
      }
    }
    try {
      copy(sourceImage, target, targetPool, same);
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
    backend.copy(targetPool, sourceImage, target, samePool);
  }
}
