package dev.soko.driver.volume;

import dev.soko.driver.backend.Backends;
import dev.soko.driver.backend.BlockMaps;
import dev.soko.driver.backend.CopyForm;
import dev.soko.driver.backend.VolumeBackend;
import dev.soko.driver.extent.ByteRange;
import dev.soko.driver.extent.RangeCursor;
import dev.soko.driver.pool.Pool;
import dev.soko.driver.state.Ids;
import dev.soko.driver.state.VolumeRecord;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Live volumes read by other nodes (a clone whose pod lands elsewhere): each read gets its own
 * point-in-time copy, taken as a snapshot is (the volume's lock held, its staged filesystem frozen
 * for the instant of the reflink or copy) into a file named by a {@link Ids#newReadCopyId read copy
 * ID}, which no record ever names. The copy's size is reserved in the pool while it exists, as a
 * snapshot's is: on a pool without reflink it takes that room, and on one with reflink the volume's
 * later writes unshare its blocks. It is removed when the read's stream closes; one left by a crash
 * is removed by {@link Recovery} at the next start. A pool whose volumes are directories makes a
 * read-only snapshot, read as a tree of files.
 */
// A KeyedLocks.Held and a FrozenFilesystems are used only for their scope.
@SuppressWarnings("try")
final class VolumeReadCopies {
  private static final Logger LOG = LoggerFactory.getLogger(VolumeReadCopies.class);

  private final Catalog catalog;
  private final VolumeLocks locks;
  private final VolumeCopier copier;
  private final Backends backends;

  VolumeReadCopies(Catalog catalog, VolumeLocks locks, VolumeCopier copier, Backends backends) {
    this.catalog = catalog;
    this.locks = locks;
    this.copier = copier;
    this.backends = backends;
  }

  /** The ready volume's facts; see {@link SnapshotImages#volumeSource}. */
  VolumeImage describe(String volumeId) {
    VolumeRecord volume = catalog.readyVolume(volumeId);
    Pool pool = catalog.pool(volume.pool());
    return facts(volume, pool, sizeOf(volume, pool));
  }

  /** A copy taken for one read: the volume's facts, and the copy in its pool. */
  private record Taken(VolumeImage facts, Pool pool, String copyId, Path copy) {}

  /** A new copy of the volume as it is now; see {@link SnapshotImages#readCopy}. */
  ReadCopy open(String volumeId) {
    Taken taken = take(volumeId, CopyForm.IMAGE);
    BlockMaps maps = backends.of(taken.pool()).blockMaps().orElseThrow();
    RangeCursor ranges;
    try {
      ranges = maps.allocated(taken.copy(), 0, taken.facts().sizeBytes());
    } catch (RuntimeException e) {
      remove(taken.pool(), taken.copyId(), taken.copy());
      throw StorageException.internal(
          "cannot read the block map of the copy of volume " + volumeId + ": " + e, e);
    }
    return new ReadCopy(
        taken.facts(),
        taken.copy(),
        new BlockStream(
            taken.facts().sizeBytes(),
            removing(ranges, taken.pool(), taken.copyId(), taken.copy()),
            Optional::empty));
  }

  /** A read-only snapshot of the volume as it is now; see {@link SnapshotImages#volumeTree}. */
  FileTree openTree(String volumeId) {
    Taken taken = take(volumeId, CopyForm.FILE_TREE);
    return new FileTree(
        "the read copy of volume " + volumeId,
        taken.copy(),
        Optional::empty,
        () -> remove(taken.pool(), taken.copyId(), taken.copy()));
  }

  /**
   * Takes the copy, the volume's lock held and its staged filesystem frozen for the instant, after
   * refusing a volume whose pool's volumes do not travel in {@code form}.
   */
  private Taken take(String volumeId, CopyForm form) {
    String copyId = Ids.newReadCopyId();
    try (KeyedLocks.Held lock = locks.volume(volumeId)) {
      VolumeRecord volume = catalog.readyVolume(volumeId);
      Pool pool = catalog.pool(volume.pool());
      VolumeBackend backend = backends.of(pool);
      if (backend.traits().copyForm() != form) {
        throw StorageException.precondition(
            "volume %s is in pool %s of backend %s, whose volumes travel as %s, not as %s",
            volume.id(),
            pool.name(),
            backend.traits().flagName(),
            shown(backend.traits().copyForm()),
            shown(form));
      }
      VolumeImage facts = facts(volume, pool, sizeOf(volume, pool));
      Path image = catalog.location(volume);
      Path copy = pool.readCopyLocation(copyId);
      pool.reserve(copyId, facts.sizeBytes());
      try (FrozenFilesystems frozen =
          copier.freeze(pool, List.of(new VolumeCopier.Source(volume, image)))) {
        backend.snapshot(pool, image, copy);
      } catch (RuntimeException e) {
        remove(pool, copyId, copy);
        throw StorageException.wrap("cannot copy volume " + volumeId + " for a read", e);
      }
      LOG.info("volume {} copied as {} for a read by another node", volumeId, copyId);
      return new Taken(facts, pool, copyId, copy);
    }
  }

  private static String shown(CopyForm form) {
    return form == CopyForm.IMAGE ? "images" : "trees of files";
  }

  /** {@code ranges}, whose close removes the copy (once, however often it is called). */
  private RangeCursor removing(RangeCursor ranges, Pool pool, String copyId, Path copy) {
    AtomicBoolean closed = new AtomicBoolean();
    return new RangeCursor() {
      @Override
      public Optional<ByteRange> next() {
        return ranges.next();
      }

      @Override
      public void close() {
        if (closed.compareAndSet(false, true)) {
          try {
            ranges.close();
          } finally {
            remove(pool, copyId, copy);
          }
        }
      }
    };
  }

  /** Removes a copy and its reservation; a failure is logged (the next start removes the file). */
  private void remove(Pool pool, String copyId, Path copy) {
    try {
      backends.of(pool).delete(copy);
      LOG.debug("removed read copy {}", copyId);
    } catch (IOException | RuntimeException e) {
      LOG.error("cannot remove read copy {}: {}", copyId, e.toString());
    } finally {
      pool.release(copyId);
    }
  }

  private long sizeOf(VolumeRecord volume, Pool pool) {
    Path image = catalog.location(volume);
    if (!backends.of(pool).exists(image)) {
      throw StorageException.precondition(
          "volume %s has lost its image file; it cannot be copied", volume.id());
    }
    return backends.of(pool).size(pool, image);
  }

  private VolumeImage facts(VolumeRecord volume, Pool pool, long size) {
    return new VolumeImage(
        volume.id(),
        pool.name(),
        size,
        volume.accessType(),
        volume.fsType(),
        backends.of(pool).traits().copyForm());
  }
}
