package dev.soko.driver.volume;

import dev.soko.driver.backend.Backends;
import dev.soko.driver.backend.VolumeBackend;
import dev.soko.driver.model.Snapshot;
import dev.soko.driver.pool.Pool;
import dev.soko.driver.state.GroupSnapshotRecord;
import dev.soko.driver.state.Ids;
import dev.soko.driver.state.RecordState;
import dev.soko.driver.state.SnapshotRecord;
import dev.soko.driver.state.VolumeRecord;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Snapshots: an immutable copy in the source volume's pool (a reflink copy of the image where the
 * pool supports it, a read-only subvolume snapshot in a btrfs-subvolume pool). The copy is complete
 * before the snapshot is returned, so it is always ready to use. Its steps ({@link #begin}, {@link
 * #take}, {@link #finish}, {@link #abandon}) also make the members of a group snapshot ({@link
 * GroupSnapshotProvisioner}), which freezes all of its volumes around all of their copies.
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
    Pending pending = begin(Ids.newSnapshotId(), name, source, "");
    try {
      try (FrozenFilesystems frozen = copier.freeze(pending.pool(), List.of(pending.source()))) {
        take(pending);
      }
      return finish(pending);
    } catch (RuntimeException e) {
      abandon(pending);
      throw StorageException.wrap("cannot create snapshot", e);
    }
  }

  /**
   * A snapshot under way: its space reserved and its record written CREATING, so that a crash from
   * here on is rolled back by recovery. The copy is made by {@link #take} (under a freeze the
   * caller holds), recorded READY by {@link #finish}, or undone by {@link #abandon}.
   */
  record Pending(SnapshotRecord record, Pool pool, VolumeCopier.Source source, Path image) {}

  /**
   * Reserves the snapshot's space and records it CREATING.
   *
   * @param groupId the group snapshot it is a member of, or empty
   */
  Pending begin(String id, String name, VolumeRecord source, String groupId) {
    Pool pool = catalog.pool(source.pool());
    VolumeBackend backend = backends.of(pool);
    Path sourceImage = catalog.location(source);
    if (!backend.exists(sourceImage)) {
      throw StorageException.precondition(
          "volume %s has lost its image file; it cannot be snapshotted", source.id());
    }
    long size = backend.size(pool, sourceImage);
    // Reported as the snapshot's size, so that Kubernetes lets a claim of the source's own request
    // restore it; a restore is made at least as large as the image whatever it asks for.
    long restoreSize = Math.min(source.requestedBytes(), size);
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
            RecordState.CREATING,
            groupId,
            source.parameters());
    Pending pending =
        new Pending(
            record, pool, new VolumeCopier.Source(source, sourceImage), pool.snapshotLocation(id));
    try {
      catalog.saveSnapshot(record);
      return pending;
    } catch (RuntimeException e) {
      abandon(pending);
      throw e;
    }
  }

  /** Makes the copy; its source is frozen by the caller where it needs to be. */
  void take(Pending pending) {
    backends.of(pending.pool()).snapshot(pending.pool(), pending.source().image(), pending.image());
  }

  /** Records the copy READY: from here on it survives a crash. */
  Snapshot finish(Pending pending) {
    SnapshotRecord ready = pending.record().withState(RecordState.READY);
    catalog.saveSnapshot(ready);
    LOG.info(
        "snapshot {} of volume {} ({} bytes, restores into {})",
        ready.id(),
        ready.sourceVolumeId(),
        ready.sizeBytes(),
        ready.restoreSizeBytes());
    return ready.toSnapshot(true);
  }

  /**
   * Undoes a snapshot that failed: its copy, its record and its reservation. A failure here is
   * logged, not thrown: the caller reports the failure that made it undo, and recovery removes at
   * the next start what is left.
   *
   * @return whether everything was undone
   */
  boolean abandon(Pending pending) {
    String id = pending.record().id();
    try {
      backends.of(pending.pool()).delete(pending.image());
      catalog.forgetSnapshot(pending.record());
      return true;
    } catch (IOException | RuntimeException cleanup) {
      LOG.error("cannot clean up failed snapshot {}: {}", id, cleanup.toString());
      return false;
    } finally {
      pending.pool().release(id);
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
      backends.of(catalog.pool(record.pool())).delete(catalog.location(record));
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
    Snapshot kept = record.toSnapshot(backends.of(pool).exists(catalog.location(record)));
    return shownGroup(kept);
  }

  /**
   * A member of a part of a group across nodes names the whole group, as the group's answer did:
   * the snapshot controller matches a member to its group by that ID.
   */
  private Snapshot shownGroup(Snapshot snapshot) {
    String shown =
        catalog
            .group(snapshot.groupSnapshotId())
            .map(GroupSnapshotRecord::shownId)
            .orElse(snapshot.groupSnapshotId());
    if (shown.equals(snapshot.groupSnapshotId())) {
      return snapshot;
    }
    return new Snapshot(
        snapshot.id(),
        snapshot.name(),
        snapshot.sourceVolumeId(),
        snapshot.sizeBytes(),
        snapshot.createdAt(),
        snapshot.readyToUse(),
        shown);
  }
}
