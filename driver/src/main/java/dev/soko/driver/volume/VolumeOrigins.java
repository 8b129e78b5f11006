package dev.soko.driver.volume;

import dev.soko.driver.backend.Backends;
import dev.soko.driver.backend.StorageTraits;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.model.ContentSource;
import dev.soko.driver.pool.Pool;
import dev.soko.driver.state.Ids;
import dev.soko.driver.state.RecordState;
import dev.soko.driver.state.SnapshotRecord;
import dev.soko.driver.state.VolumeRecord;
import java.nio.file.Path;

/**
 * A new volume's content source resolved into its {@link VolumeOrigin}: this node's snapshot or
 * volume, copied by {@link VolumeCopier}, or, when this node holds no such ID, another node's,
 * copied over the data path ({@link RemoteCopies}). Each is checked against the request and the
 * target pool before anything is reserved. Callers hold the source's lock.
 */
final class VolumeOrigins {
  private final Catalog catalog;
  private final Backends backends;
  private final VolumeCopier copier;
  private final RemoteCopies remote;

  VolumeOrigins(Catalog catalog, Backends backends, VolumeCopier copier, RemoteCopies remote) {
    this.catalog = catalog;
    this.backends = backends;
    this.copier = copier;
    this.remote = remote;
  }

  /** The origin of a volume from {@code source}; null for a blank one. */
  VolumeOrigin of(ContentSource source, AccessType accessType, String fsType, Pool target) {
    if (source instanceof ContentSource.FromSnapshot s) {
      return ofSnapshot(s.snapshotId(), accessType, fsType, target);
    }
    if (source instanceof ContentSource.FromVolume v) {
      return ofVolume(v.volumeId(), accessType, fsType, target);
    }
    return null;
  }

  private VolumeOrigin ofSnapshot(
      String snapshotId, AccessType accessType, String fsType, Pool target) {
    var held = catalog.snapshot(snapshotId);
    if (held.isEmpty() && Ids.isSnapshotId(snapshotId)) {
      // Not this node's: the node that holds it, if any, copies it over the data path.
      var elsewhere = remote.find(snapshotId);
      if (elsewhere.isPresent()) {
        return remote.origin(elsewhere.get(), accessType, fsType, target);
      }
    }
    SnapshotRecord snapshot =
        held.filter(r -> r.state() == RecordState.READY)
            .orElseThrow(
                () ->
                    StorageException.notFound(
                        "snapshot %s does not exist", Catalog.shown(snapshotId)));
    Pool from = catalog.pool(snapshot.pool());
    checkCopyable(from, target, "snapshot", snapshot.id());
    VolumeOrigin.checkCompatible(
        snapshot.accessType(), snapshot.fsType(), accessType, fsType, "snapshot");
    Path image = catalog.location(snapshot);
    return new VolumeOrigin(
        snapshot.sizeBytes(),
        "snapshot " + snapshot.id(),
        (into, pool, size) -> copier.copy(image, into, pool, from == pool),
        snapshot.sourceParameters());
  }

  private VolumeOrigin ofVolume(
      String volumeId, AccessType accessType, String fsType, Pool target) {
    if (catalog.volume(volumeId).isEmpty() && Ids.isVolumeId(volumeId)) {
      // Not this node's: the node that holds it, if any, copies it over the data path.
      var elsewhere = remote.findVolume(volumeId);
      if (elsewhere.isPresent()) {
        return remote.origin(elsewhere.get(), accessType, fsType, target);
      }
    }
    VolumeRecord volume = catalog.readyVolume(volumeId);
    Pool from = catalog.pool(volume.pool());
    checkCopyable(from, target, "source volume", volume.id());
    VolumeOrigin.checkCompatible(
        volume.accessType(), volume.fsType(), accessType, fsType, "source volume");
    Path image = catalog.location(volume);
    return new VolumeOrigin(
        volume.capacityBytes(),
        "source volume " + volume.id(),
        (into, pool, size) -> copier.copyVolume(volume, image, into, pool, from == pool),
        volume.parameters());
  }

  /**
   * Copies between pools are sparse copies of image files; a subvolume is copied only as a snapshot
   * inside its own btrfs filesystem, and an image file cannot become a subvolume (or the reverse)
   * without copying every byte through a mount of each, which a CreateVolume does not do.
   */
  private void checkCopyable(Pool from, Pool to, String what, String id) {
    StorageTraits source = backends.of(from).traits();
    StorageTraits target = backends.of(to).traits();
    boolean bothCopyAcross = source.copiesAcrossPools() && target.copiesAcrossPools();
    if (from != to && !bothCopyAcross) {
      throw StorageException.invalid(
          "the %s %s is in pool %s (backend %s) and cannot be copied into pool %s (backend %s):"
              + " a btrfs-subvolume pool's volumes are copied only as snapshots within that pool",
          what, id, from.name(), source.flagName(), to.name(), target.flagName());
    }
  }
}
