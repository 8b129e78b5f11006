package dev.soko.driver.volume;

import dev.soko.driver.backend.AttachedDevice;
import dev.soko.driver.backend.Backends;
import dev.soko.driver.mount.MountEntry;
import dev.soko.driver.mount.Mounter;
import dev.soko.driver.pool.Pool;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
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
 *
 * <p>This class holds the order and the report; each step is a class of its own: the replay of each
 * kind of record ({@link VolumeReplay}, {@link GroupSnapshotReplay}, {@link SnapshotReplay},
 * sharing {@link RecordReplay}), the sweep of the storage no record names ({@link
 * LeftoverStorage}), the attached devices ({@link StaleDevices}) and the lost stagings ({@link
 * LostStagings}). They count into one {@link RecoveryTally}.
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
  private final Backends backends;
  private final Presentations presentations;
  private final LeftoverStorage storage;
  private final VolumeReplay volumes;
  private final SnapshotReplay snapshots;
  private final GroupSnapshotReplay groups;
  private final StaleDevices staleDevices;
  private final LostStagings stagings;
  private final Mounter mounter;

  Recovery(Catalog catalog, Mounter mounter, Backends backends, Presentations presentations) {
    this.catalog = catalog;
    this.mounter = mounter;
    this.backends = backends;
    this.presentations = presentations;
    this.storage = new LeftoverStorage(backends);
    RecordReplay replay = new RecordReplay(storage);
    this.volumes = new VolumeReplay(catalog, backends, replay);
    this.snapshots = new SnapshotReplay(catalog, backends, replay);
    this.groups = new GroupSnapshotReplay(catalog, replay);
    this.staleDevices = new StaleDevices(presentations);
    this.stagings = new LostStagings(catalog, mounter, backends, presentations);
  }

  /** Loads the pool's records into the catalog, repairing as it goes. */
  Report run(Pool pool) {
    int temp =
        pool.volumeRecords().removeTempFiles()
            + pool.snapshotRecords().removeTempFiles()
            + pool.groupRecords().removeTempFiles();
    RecoveryTally tally = new RecoveryTally();
    volumes.load(pool, tally);
    // Groups before snapshots: the members of an unfinished group go with it.
    groups.load(pool, tally);
    snapshots.load(pool, tally);
    groups.removeUnfinished(pool, tally);
    // The repairs above are journal entries; fold them and the replayed ones into the records.
    pool.volumeRecords().checkpoint();
    pool.snapshotRecords().checkpoint();
    pool.groupRecords().checkpoint();
    // Told while the orphans are still there: a device whose file is deleted is known only by the
    // path the kernel shows, which may be relative to a mount that is gone.
    Map<AttachedDevice, Path> held = presentations.of(pool).attachedIn(pool);
    int readCopies = storage.removeReadCopies(pool);
    int orphans = storage.removeOrphanImages(pool, tally.keep);
    List<MountEntry> mounts = mounter.mounts();
    int detached = staleDevices.detach(pool, held, tally, mounts);
    int lostMounts = stagings.report(pool);
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
            tally.devicesInUse,
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

  /** What deletes left for later (a btrfs qgroup); a failure here must not keep the pool shut. */
  private void tidy(Pool pool) {
    try {
      backends.of(pool).tidy(pool);
    } catch (RuntimeException e) {
      LOG.warn("recovery: cannot tidy pool {}: {}", pool.name(), e.toString());
    }
  }
}
