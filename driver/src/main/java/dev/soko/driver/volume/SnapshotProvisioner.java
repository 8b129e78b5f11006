package dev.soko.driver.volume;

import dev.soko.driver.backend.Backends;
import dev.soko.driver.backend.VolumeBackend;
import dev.soko.driver.model.Snapshot;
import dev.soko.driver.pool.Pool;
import dev.soko.driver.state.Ids;
import dev.soko.driver.state.RecordState;
import dev.soko.driver.state.SnapshotRecord;
import dev.soko.driver.state.VolumeRecord;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Snapshots: an immutable copy in the source volume's pool (a reflink copy of the image where the
 * pool supports it, a read-only subvolume snapshot in a btrfs-subvolume pool). The copy is complete
 * before the snapshot is returned, so it is always ready to use.
 */
// A KeyedLocks.Held is used only for its scope: the lock is held until the block ends.
@SuppressWarnings("try")
final class SnapshotProvisioner {
  private static final Logger LOG = LoggerFactory.getLogger(SnapshotProvisioner.class);

  private final Catalog catalog;
  private final VolumeLocks locks;
  private final VolumeCopier copier;
  private final Backends backends;

  SnapshotProvisioner(Catalog catalog, VolumeLocks locks, VolumeCopier copier, Backends backends) {
    this.backends = backends;
    this.catalog = catalog;
    this.locks = locks;
    this.copier = copier;
  }

  Snapshot create(String name, String sourceVolumeId) {
    Names.check("snapshot", name);
    if (sourceVolumeId == null || sourceVolumeId.isEmpty()) {
      throw StorageException.invalid("source volume ID is required");
    }
    try (KeyedLocks.Held nameLock = locks.snapshotName(name)) {
      var existing = catalog.snapshotByName(name);
      if (existing.isPresent()) {
        SnapshotRecord found = existing.get();
        if (!found.sourceVolumeId().equals(sourceVolumeId)) {
          throw StorageException.alreadyExists(
              "a snapshot named %s exists for another volume", Catalog.shown(name));
        }
        if (found.state() != RecordState.READY) {
          throw new StorageException(
              StorageException.Reason.ABORTED, "snapshot " + found.id() + " is being created");
        }
        return describe(found);
      }
      try (KeyedLocks.Held volumeLock = locks.volume(sourceVolumeId)) {
        return copy(name, catalog.readyVolume(sourceVolumeId));
      }
    }
  }

  private Snapshot copy(String name, VolumeRecord source) {
    Pool pool = catalog.pool(source.pool());
    VolumeBackend backend = backends.of(pool);
    Path sourceImage = catalog.image(source);
    if (!backend.exists(sourceImage)) {
      throw StorageException.precondition(
          "volume %s has lost its image file; it cannot be snapshotted", source.id());
    }
    long size = backend.size(pool, sourceImage);
    // Reported as the snapshot's size, so that Kubernetes lets a claim of the source's own request
    // restore it; a restore is made at least as large as the image whatever it asks for.
    long restoreSize = Math.min(source.requestedBytes(), size);
    String id = Ids.newSnapshotId();
    pool.reserve(id, size);
    SnapshotRecord record =
        new SnapshotRecord(
            id,
            name,
            pool.name(),
            source.id(),
            size,
            restoreSize,
            source.accessType(),
            source.fsType(),
            Instant.now(),
            RecordState.CREATING);
    Path image = pool.snapshotImage(id);
    try {
      catalog.saveSnapshot(record);
      copier.copyVolume(source, sourceImage, image, pool, true, VolumeCopier.Kind.SNAPSHOT);
      SnapshotRecord ready = record.withState(RecordState.READY);
      catalog.saveSnapshot(ready);
      LOG.info(
          "snapshot {} of volume {} ({} bytes, restores into {})",
          id,
          source.id(),
          size,
          restoreSize);
      return ready.toSnapshot(true);
    } catch (RuntimeException e) {
      try {
        backend.delete(image);
        catalog.forgetSnapshot(record);
      } catch (IOException | RuntimeException cleanup) {
        LOG.error("cannot clean up failed snapshot {}: {}", id, cleanup.toString());
      } finally {
        pool.release(id);
      }
      throw VolumeProvisioner.wrap("cannot create snapshot", e);
    }
  }

  void delete(String snapshotId) {
    if (!Ids.isSnapshotId(snapshotId)) {
      return;
    }
    try (KeyedLocks.Held lock = locks.snapshot(snapshotId)) {
      var found = catalog.snapshot(snapshotId);
      if (found.isEmpty()) {
        return;
      }
      SnapshotRecord record = found.get();
      catalog.saveSnapshot(record.withState(RecordState.DELETING));
      backends.of(catalog.pool(record.pool())).delete(catalog.image(record));
      catalog.forgetSnapshot(record);
      catalog.pool(record.pool()).release(snapshotId);
      LOG.info("deleted snapshot {}", snapshotId);
    } catch (IOException e) {
      throw StorageException.internal("cannot delete snapshot " + snapshotId, e);
    }
  }

  /**
   * The snapshot as reported: ready to use only while its backend still has it (an image file, or a
   * btrfs subvolume: a directory, which a check for a regular file took for missing).
   */
  Snapshot describe(SnapshotRecord record) {
    Pool pool = catalog.pool(record.pool());
    return record.toSnapshot(backends.of(pool).exists(catalog.image(record)));
  }
}
