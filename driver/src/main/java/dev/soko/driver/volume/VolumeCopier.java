package dev.soko.driver.volume;

import dev.soko.driver.backend.Backends;
import dev.soko.driver.mount.Mounter;
import dev.soko.driver.pool.Pool;
import dev.soko.driver.state.VolumeRecord;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * Copies a volume or snapshot for clones and restores, through the backend, and freezes the volumes
 * that snapshots and clones copy. When a source is a staged filesystem volume its filesystem is
 * frozen during the copy, so the copy is consistent (everything written before the freeze is in it)
 * instead of catching a write half way; a group snapshot freezes all of its volumes at once ({@link
 * #freeze}) for as long as it copies them, after it has refused members that cannot be kept still
 * ({@link #holds}).
 */
// A FrozenFilesystems is used only for its scope: the filesystems are thawed when the block ends.
@SuppressWarnings("try")
final class VolumeCopier {
  private final Mounter mounter;
  private final Backends backends;
  private final Presentations presentations;

  VolumeCopier(Mounter mounter, Backends backends, Presentations presentations) {
    this.presentations = presentations;
    this.mounter = mounter;
    this.backends = backends;
  }

  /** A volume to be copied and its storage. */
  record Source(VolumeRecord volume, Path image) {}

  /** How each of {@code sources}, all volumes of {@code pool}, is kept still while copied. */
  List<CopyHold> holds(Pool pool, List<Source> sources) {
    Presentation presentation = presentations.of(pool);
    return sources.stream().map(s -> presentation.copyHold(pool, s.volume(), s.image())).toList();
  }

  /**
   * Freezes the staged filesystems among {@code sources}, all volumes of {@code pool}: volumes not
   * in use have none (nothing writes to them), and a single copy of a volume in use that has none
   * to freeze goes ahead unfrozen. Closing the result thaws them; a freeze that fails leaves none
   * frozen.
   */
  FrozenFilesystems freeze(Pool pool, List<Source> sources) {
    return freeze(holds(pool, sources));
  }

  /** Freezes the filesystems of {@code holds}, as {@link #freeze(Pool, List)} does. */
  FrozenFilesystems freeze(List<CopyHold> holds) {
    List<Path> staged = holds.stream().map(CopyHold::toFreeze).flatMap(Optional::stream).toList();
    return FrozenFilesystems.freeze(mounter, staged);
  }

  /**
   * Copies a volume within its pool or (for image files) into another, frozen while it is copied;
   * callers have refused the copies a backend cannot make, so the target pool's backend is the
   * source's too.
   */
  void copyVolume(
      VolumeRecord source, Path sourceImage, Path target, Pool targetPool, boolean same) {
    try (FrozenFilesystems frozen = freeze(targetPool, List.of(new Source(source, sourceImage)))) {
      copy(sourceImage, target, targetPool, same);
    }
  }

  /** Copies within one pool as a reflink where possible; across pools always as a sparse copy. */
  void copy(Path sourceImage, Path target, Pool targetPool, boolean samePool) {
    backends.of(targetPool).copy(targetPool, sourceImage, target, samePool);
  }
}
