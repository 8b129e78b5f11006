package dev.soko.driver.volume;

import dev.soko.driver.backend.Backends;
import dev.soko.driver.model.ContentSource;
import dev.soko.driver.mount.LoopDevice;
import dev.soko.driver.mount.MountEntry;
import dev.soko.driver.mount.Mounter;
import dev.soko.driver.pool.Pool;
import dev.soko.driver.state.GroupSnapshotRecord;
import dev.soko.driver.state.Ids;
import dev.soko.driver.state.RecordState;
import dev.soko.driver.state.RecordStore;
import dev.soko.driver.state.SnapshotRecord;
import dev.soko.driver.state.VolumeRecord;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Start-up reconciliation of one pool's records with its files and the host's loop devices. Given
 * the engine's write order (volumes: image, then record; record removed, then image; snapshots:
 * CREATING record, image, READY record; DELETING record, image removed, record removed; group
 * snapshots: CREATING group record naming its members, then the members, then the group READY;
 * DELETING group record, members removed, group record removed) every crash leaves a state this
 * resolves: unfinished creates are rolled back (the client was never told they succeeded),
 * unfinished deletes are finished, images without a record are removed, records whose image
 * vanished are kept (and reported abnormal), what a power cut undid of a volume's storage while its
 * record survived is put back, and loop devices of images that no longer back a volume are
 * detached.
 */
final class Recovery {
  private static final Logger LOG = LoggerFactory.getLogger(Recovery.class);

  /** What one pool's recovery repaired. */
  record Report(
      String pool,
      int tempRecordsRemoved,
      int corruptRecordsQuarantined,
      int unfinishedCreatesRolledBack,
      int unfinishedDeletesFinished,
      int orphanImagesRemoved,
      int readCopiesRemoved,
      int volumesMissingImages,
      int snapshotsMissingImages,
      int blankImagesRemade,
      int uncommittedChangesRestored,
      int staleLoopDevicesDetached,
      int staleLoopDevicesInUse,
      int stagedVolumesLostTheirMount,
      int volumes,
      int snapshots,
      int groupSnapshots) {

    boolean repairedAnything() {
      return tempRecordsRemoved
              + corruptRecordsQuarantined
              + unfinishedCreatesRolledBack
              + unfinishedDeletesFinished
              + orphanImagesRemoved
              + readCopiesRemoved
              + volumesMissingImages
              + snapshotsMissingImages
              + blankImagesRemade
              + uncommittedChangesRestored
              + staleLoopDevicesDetached
              + staleLoopDevicesInUse
              + stagedVolumesLostTheirMount
          > 0;
    }
  }

  private final Catalog catalog;
  private final Mounter mounter;
  private final Backends backends;
  private final Presentations presentations;

  Recovery(Catalog catalog, Mounter mounter, Backends backends, Presentations presentations) {
    this.presentations = presentations;
    this.catalog = catalog;
    this.mounter = mounter;
    this.backends = backends;
  }

  /** What one run has counted so far; becomes its {@link Report}. */
  private static final class Tally {
    int corrupt;
    int rolledBack;
    int finished;
    int volumesMissing;
    int snapshotsMissing;
    int remade;
    int restored;
    int loopsInUse;

    /** The images of READY records: every other image in the pool is an orphan. */
    final Set<Path> keep = new HashSet<>();

    /** The images of READY volumes: a loop device backed by anything else is stale. */
    final Set<Path> liveVolumeImages = new HashSet<>();

    /** Counts a create a crash cut short as rolled back, a delete as finished. */
    void settled(RecordState unfinished) {
      if (unfinished == RecordState.CREATING) {
        rolledBack++;
      } else {
        finished++;
      }
    }

    /** Group snapshots a crash left CREATING or DELETING: removed once their members are. */
    final List<GroupSnapshotRecord> unfinishedGroups = new ArrayList<>();

    /** The members of those groups, with the group's state: they go whatever their own state. */
    final Map<String, RecordState> unfinishedGroupMembers = new HashMap<>();
  }

  /** Loads the pool's records into the catalog, repairing as it goes. */
  Report run(Pool pool) {
    int temp =
        pool.volumeRecords().removeTempFiles()
            + pool.snapshotRecords().removeTempFiles()
            + pool.groupRecords().removeTempFiles();
    Tally tally = new Tally();
    loadVolumes(pool, tally);
    // Groups before snapshots: the members of an unfinished group go with it.
    loadGroups(pool, tally);
    loadSnapshots(pool, tally);
    removeUnfinishedGroups(pool, tally);
    // The repairs above are journal entries; fold them and the replayed ones into the records.
    pool.volumeRecords().checkpoint();
    pool.snapshotRecords().checkpoint();
    pool.groupRecords().checkpoint();
    // Told while the orphans are still there: a device whose file is deleted is known only by the
    // path the kernel shows, which may be relative to a mount that is gone.
    Map<LoopDevice, Path> held = presentations.of(pool).attachedIn(pool);
    int readCopies = removeReadCopies(pool);
    int orphans = removeOrphanImages(pool, tally.keep);
    List<MountEntry> mounts = mounter.mounts();
    int detached = detachStaleLoops(pool, held, tally, mounts);
    int lostMounts = reportLostStagings(pool, mounts);
    tidy(pool);
    Report report =
        new Report(
            pool.name(),
            temp,
            tally.corrupt,
            tally.rolledBack,
            tally.finished,
            orphans,
            readCopies,
            tally.volumesMissing,
            tally.snapshotsMissing,
            tally.remade,
            tally.restored,
            detached,
            tally.loopsInUse,
            lostMounts,
            (int)
                catalog.volumes().values().stream()
                    .filter(v -> v.pool().equals(pool.name()))
                    .count(),
            (int)
                catalog.snapshots().values().stream()
                    .filter(s -> s.pool().equals(pool.name()))
                    .count(),
            pool.groupRecords().ids().size());
    if (report.repairedAnything()) {
      LOG.warn("recovery of pool {} repaired: {}", pool.name(), report);
    } else {
      LOG.info(
          "recovery of pool {}: nothing to repair ({} volumes, {} snapshots, {} group snapshots)",
          pool.name(),
          report.volumes(),
          report.snapshots(),
          report.groupSnapshots());
    }
    return report;
  }

  private void loadVolumes(Pool pool, Tally tally) {
    RecordStore records = pool.volumeRecords();
    for (String id : records.ids()) {
      VolumeRecord record = read(records, id, VolumeRecord::fromFields, tally);
      if (record == null) {
        continue;
      }
      Path image = pool.volumeImage(id);
      if (settledUnfinished(pool, records, "volume", id, record.state(), image, tally)) {
        continue;
      }
      catalog.loadVolume(record);
      pool.adopt(id, record.capacityBytes());
      tally.keep.add(image);
      tally.liveVolumeImages.add(image);
      if (remakeLostBlankImage(pool, record, image)) {
        tally.remade++;
        LOG.warn(
            "recovery: volume {} was created just before the crash and its empty image had not"
                + " reached the disk; made it again",
            id);
      }
      // Also after a remake that only raised a surviving subvolume's limit: its flags may be lost.
      if (!backends.of(pool).exists(image)) {
        tally.volumesMissing++;
        LOG.error(
            "recovery: volume {} ({}) has no image file; it is kept and reported abnormal",
            id,
            record.name());
      } else if (restoreUncommitted(pool, record, image)) {
        tally.restored++;
      }
    }
  }

  /**
   * A READY volume's storage may have lost, with a power cut, a change the pool filesystem had not
   * committed yet while its record survived (a btrfs qgroup limit: made at create, raised by an
   * expansion). Checked for every volume, not only blank ones: an expansion changes a volume that
   * holds data. A failure is logged, and the pool opens anyway.
   */
  private boolean restoreUncommitted(Pool pool, VolumeRecord record, Path image) {
    try {
      if (backends.of(pool).restoreUncommitted(pool, image, record.capacityBytes())) {
        LOG.warn(
            "recovery: volume {} had lost a change the pool filesystem had not committed (its"
                + " size limit or settings); put back for {} bytes",
            record.id(),
            record.capacityBytes());
        return true;
      }
    } catch (RuntimeException e) {
      LOG.error(
          "recovery: cannot check volume {} for changes a power cut lost: {}",
          record.id(),
          e.getMessage());
    }
    return false;
  }

  private void loadSnapshots(Pool pool, Tally tally) {
    RecordStore records = pool.snapshotRecords();
    for (String id : records.ids()) {
      SnapshotRecord record = read(records, id, SnapshotRecord::fromFields, tally);
      if (record == null) {
        continue;
      }
      Path image = pool.snapshotImage(id);
      RecordState state = tally.unfinishedGroupMembers.getOrDefault(id, record.state());
      if (settledUnfinished(pool, records, "snapshot", id, state, image, tally)) {
        continue;
      }
      catalog.loadSnapshot(record);
      pool.adopt(id, record.sizeBytes());
      tally.keep.add(image);
      if (!backends.of(pool).exists(image)) {
        tally.snapshotsMissing++;
        LOG.error(
            "recovery: snapshot {} ({}) has no image file; it is kept, and restoring from it fails",
            id,
            record.name());
      }
    }
  }

  /**
   * Indexes the complete group snapshots and notes the ones a crash left CREATING (the client was
   * never told of them, and retries by name) or DELETING, whose members then go in {@link
   * #loadSnapshots}, ready or not.
   */
  private void loadGroups(Pool pool, Tally tally) {
    RecordStore records = pool.groupRecords();
    for (String id : records.ids()) {
      GroupSnapshotRecord record = read(records, id, GroupSnapshotRecord::fromFields, tally);
      if (record == null) {
        continue;
      }
      if (record.state() == RecordState.READY) {
        catalog.loadGroup(record);
        continue;
      }
      tally.unfinishedGroups.add(record);
      record
          .snapshotIds()
          .forEach(member -> tally.unfinishedGroupMembers.put(member, record.state()));
    }
  }

  /** The records of unfinished groups, once their members are gone: the last step of each. */
  private void removeUnfinishedGroups(Pool pool, Tally tally) {
    for (GroupSnapshotRecord group : tally.unfinishedGroups) {
      pool.groupRecords().delete(group.id());
      tally.settled(group.state());
      LOG.warn(
          "recovery: group snapshot {} ({} snapshots) was {} at the crash; removed",
          group.id(),
          group.snapshotIds().size(),
          group.state());
    }
  }

  /** What deletes left for later (a btrfs qgroup); a failure here must not keep the pool shut. */
  private void tidy(Pool pool) {
    try {
      backends.of(pool).tidy(pool);
    } catch (RuntimeException e) {
      LOG.warn("recovery: cannot tidy pool {}: {}", pool.name(), e.toString());
    }
  }

  /**
   * A record that a crash left CREATING or DELETING: its image and then the record go, which rolls
   * the create back (the client was never told it succeeded) or finishes the delete. True when the
   * record was such a one.
   */
  private boolean settledUnfinished(
      Pool pool,
      RecordStore records,
      String what,
      String id,
      RecordState state,
      Path image,
      Tally tally) {
    if (state == RecordState.READY) {
      return false;
    }
    deleteFile(pool, image);
    records.delete(id);
    tally.settled(state);
    LOG.warn("recovery: {} {} was {} at the crash; removed", what, id, state);
    return true;
  }

  /**
   * A blank volume's image is not flushed when made (ImageFiles.createSparse), so a power loss soon
   * after the create may lose the file or its size while the create's journal entry survives. Such
   * a volume was never staged (staging flushes the image) and so never held data: it is made again.
   * Anything else that lacks its image is reported, never papered over.
   */
  private boolean remakeLostBlankImage(Pool pool, VolumeRecord record, Path image) {
    if (!record.source().equals(ContentSource.EMPTY)
        || !record.stagedAt().isEmpty()
        || !pool.volumeRecords().replayedFromJournal(record.id())) {
      return false;
    }
    if (!backends.of(pool).exists(image)) {
      backends.of(pool).create(pool, image, record.capacityBytes());
      // Flushed here: the pool opened with a checkpoint that already wrote this record's file, so
      // no later checkpoint flushes the image for it.
      Pool.fsync(image);
      return true;
    }
    if (backends.of(pool).size(pool, image) < record.capacityBytes()) {
      backends.of(pool).grow(pool, image, record.capacityBytes());
      return true;
    }
    return false;
  }

  private static <T> T read(
      RecordStore store, String id, Function<Map<String, String>, T> parse, Tally tally) {
    try {
      return store.read(id).map(parse).orElse(null);
    } catch (RuntimeException e) {
      Path aside = store.quarantine(id);
      tally.corrupt++;
      LOG.error("recovery: record {} is unreadable ({}); moved to {}", id, e.getMessage(), aside);
      return null;
    }
  }

  /**
   * Removes the temporary copies that reads by other nodes left when the driver stopped or crashed
   * mid-stream: no record ever names one, and the read that needed it ended with the process.
   */
  private int removeReadCopies(Pool pool) {
    int removed = 0;
    for (Path file : backends.of(pool).stored(pool)) {
      if (backends.of(pool).idOf(file).filter(Ids::isReadCopyId).isPresent()) {
        deleteFile(pool, file);
        removed++;
        LOG.warn("recovery: {} was a copy for another node's read, cut by a stop; removed", file);
      }
    }
    return removed;
  }

  private int removeOrphanImages(Pool pool, Set<Path> keep) {
    int removed = 0;
    for (Path file : backends.of(pool).stored(pool)) {
      if (backends.of(pool).idOf(file).isEmpty()) {
        LOG.warn("recovery: {} is not a Soko image; left alone", file);
        continue;
      }
      if (!keep.contains(file)) {
        deleteFile(pool, file);
        removed++;
        LOG.warn("recovery: image {} had no record (a create interrupted); removed", file);
      }
    }
    return removed;
  }

  private int detachStaleLoops(
      Pool pool, Map<LoopDevice, Path> held, Tally tally, List<MountEntry> mounts) {
    int detached = 0;
    for (Map.Entry<LoopDevice, Path> entry : held.entrySet()) {
      LoopDevice loop = entry.getKey();
      if (!loop.backingFileDeleted() && tally.liveVolumeImages.contains(entry.getValue())) {
        continue;
      }
      List<Path> users =
          mounts.stream()
              .filter(m -> Health.mounts(m, loop.device()))
              .map(MountEntry::mountPoint)
              .toList();
      if (!users.isEmpty()) {
        // Detaching would only mark it to clear on last close; unmounting a workload's data is
        // not recovery's call. Say so loudly instead.
        tally.loopsInUse++;
        LOG.error(
            "recovery: {} backs no volume but is still mounted at {}; left for an operator",
            loop.device(),
            users);
        continue;
      }
      try {
        presentations.of(pool).detach(loop.device());
        detached++;
        LOG.warn(
            "recovery: detached {} (its image {} backs no volume)",
            loop.device(),
            entry.getValue());
      } catch (RuntimeException e) {
        LOG.error("recovery: cannot detach stale {}: {}", loop.device(), e.getMessage());
      }
    }
    return detached;
  }

  /** Volumes recorded as staged whose loop device or staging mount is gone (e.g. a reboot). */
  private int reportLostStagings(Pool pool, List<MountEntry> mounts) {
    Health.View view = new Health(catalog, mounter, backends, presentations).view();
    int lost = 0;
    for (VolumeRecord record : catalog.volumes().values()) {
      if (record.pool().equals(pool.name())
          && !record.stagedAt().isEmpty()
          && backends.of(pool).exists(pool.volumeImage(record.id()))
          && view.condition(pool, record, pool.volumeImage(record.id())).abnormal()) {
        lost++;
        LOG.warn(
            "recovery: volume {} was staged at {} but {}",
            record.id(),
            record.stagedAt(),
            view.condition(pool, record, pool.volumeImage(record.id())).message());
      }
    }
    return lost;
  }

  private void deleteFile(Pool pool, Path file) {
    try {
      backends.of(pool).delete(file);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot remove " + file, e);
    }
  }
}
