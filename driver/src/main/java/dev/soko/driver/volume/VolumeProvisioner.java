package dev.soko.driver.volume;

import dev.soko.driver.backend.Backends;
import dev.soko.driver.backend.StorageTraits;
import dev.soko.driver.backend.VolumeBackend;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.model.ContentSource;
import dev.soko.driver.model.Volume;
import dev.soko.driver.model.VolumeCondition;
import dev.soko.driver.mount.MountOptions;
import dev.soko.driver.pool.Pool;
import dev.soko.driver.pool.PoolException;
import dev.soko.driver.pool.Sizes;
import dev.soko.driver.state.Ids;
import dev.soko.driver.state.RecordState;
import dev.soko.driver.state.SnapshotRecord;
import dev.soko.driver.state.VolumeRecord;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The controller half for volumes: create (blank, clone, restore), delete and expand. Writes are
 * ordered so that a crash between any two leaves at worst an image without a record, which recovery
 * removes: a create writes the image and then its one (READY) record, a delete removes the record
 * and then the image. The client is told of success only after the record step, so nothing it was
 * told is ever lost, and each call costs one record write.
 */
// A KeyedLocks.Held is used only for its scope: the lock is held until the block ends.
@SuppressWarnings("try")
final class VolumeProvisioner {
  private static final Logger LOG = LoggerFactory.getLogger(VolumeProvisioner.class);

  private final Catalog catalog;
  private final VolumeLocks locks;
  private final Backends backends;
  private final Presentations presentations;
  private final VolumeCopier copier;
  private final RemoteCopies remote;

  private final VolumeAttributes attributes;

  VolumeProvisioner(
      Catalog catalog,
      VolumeLocks locks,
      Backends backends,
      Presentations presentations,
      VolumeCopier copier,
      VolumeAttributes attributes,
      RemoteSnapshots remote) {
    this.catalog = catalog;
    this.attributes = attributes;
    this.locks = locks;
    this.backends = backends;
    this.presentations = presentations;
    this.copier = copier;
    this.remote = new RemoteCopies(remote, backends);
  }

  /**
   * What a new volume's content comes from, resolved and checked; {@code bytes} is the size of its
   * image, which a copy can never be smaller than, {@code shown} names it in messages and {@code
   * copy} writes it into the new volume's storage; {@code parameters} are the StorageClass
   * parameters its content was made with (none known for another node's).
   */
  private record Origin(
      long bytes, String shown, Copy copy, java.util.Map<String, String> parameters) {}

  /**
   * Writes an origin's content into {@code target}, a new volume's storage of {@code size} bytes in
   * {@code pool}.
   */
  @FunctionalInterface
  private interface Copy {
    void into(Path target, Pool pool, long size);
  }

  Volume create(VolumeRequest request) {
    String name = Names.check("volume", request.name());
    if (request.accessType() == null) {
      throw StorageException.invalid("access type is required");
    }
    try (KeyedLocks.Held nameLock = locks.volumeName(name)) {
      Pool pool = catalog.pool(request.pool());
      String fsType = fsType(request, pool);
      ContentSource source = Objects.requireNonNullElse(request.source(), ContentSource.EMPTY);
      var existing = catalog.volumeByName(name);
      if (existing.isPresent()) {
        return sameOrConflict(existing.get(), request, pool, fsType, source);
      }
      if (source instanceof ContentSource.FromVolume v) {
        try (KeyedLocks.Held sourceLock = locks.volume(v.volumeId())) {
          return createFrom(request, pool, fsType, source);
        }
      }
      if (source instanceof ContentSource.FromSnapshot s) {
        try (KeyedLocks.Held sourceLock = locks.snapshot(s.snapshotId())) {
          return createFrom(request, pool, fsType, source);
        }
      }
      return createFrom(request, pool, fsType, source);
    }
  }

  private String fsType(VolumeRequest request, Pool pool) {
    StorageTraits traits = backends.of(pool).traits();
    if (request.accessType() == AccessType.BLOCK) {
      if (!traits.blockVolumes()) {
        throw StorageException.invalid(
            "pool %s has backend %s, which serves filesystem volumes (%s) only; block volumes"
                + " need a pool with backend %s",
            pool.name(),
            traits.flagName(),
            String.join(", ", traits.fsTypes()),
            String.join(" or ", backends.servingBlockVolumes()));
      }
      return "";
    }
    String wanted = request.fsType() == null ? "" : request.fsType();
    if (wanted.isEmpty()) {
      wanted =
          pool.config().fsTypes().isEmpty()
              ? traits.defaultFsType()
              : pool.config().fsTypes().iterator().next();
    }
    if (!traits.formatsVolumes() && !traits.fsTypes().contains(wanted)) {
      // Its volumes are of the pool filesystem's own kind: there is no device to format.
      throw StorageException.invalid(
          "pool %s has backend %s, whose volumes have filesystem %s, not %s",
          pool.name(),
          traits.flagName(),
          String.join(", ", traits.fsTypes()),
          Catalog.shown(wanted));
    }
    if (traits.formatsVolumes()) {
      MountOptions.checkFsType(wanted);
    }
    if (!pool.config().fsTypes().isEmpty() && !pool.config().fsTypes().contains(wanted)) {
      throw StorageException.invalid(
          "pool %s does not offer filesystem %s (it offers %s)",
          pool.name(), wanted, pool.config().fsTypes());
    }
    return wanted;
  }

  private Volume sameOrConflict(
      VolumeRecord existing, VolumeRequest request, Pool pool, String fsType, ContentSource src) {
    long capacity = existing.capacityBytes();
    boolean fits =
        capacity >= request.requiredBytes()
            && (request.limitBytes() == 0 || capacity <= request.limitBytes());
    boolean same =
        existing.pool().equals(pool.name())
            && existing.accessType() == request.accessType()
            && existing.fsType().equals(fsType)
            && existing.source().equals(src)
            && sameParameters(existing.parameters(), nonNull(request.parameters()))
            && existing.mutableParameters().equals(attributes.check(pool, request, fsType));
    if (!fits || !same) {
      throw StorageException.alreadyExists(
          "a volume named %s exists with a different capacity, type, source or parameters",
          Catalog.shown(existing.name()));
    }
    if (existing.state() != RecordState.READY) {
      throw new StorageException(
          StorageException.Reason.ABORTED, "volume " + existing.id() + " is still being created");
    }
    return existing.toVolume(VolumeCondition.HEALTHY);
  }

  /**
   * Whether a volume kept {@code kept} for a request of {@code requested}: the same, but for the
   * attributes' keys a copy kept from its source ({@link VolumeAttributes#copiedParameters}).
   */
  private boolean sameParameters(
      java.util.Map<String, String> kept, java.util.Map<String, String> requested) {
    java.util.List<String> attributeKeys = attributes.classParameters();
    for (var entry : kept.entrySet()) {
      String asked = requested.get(entry.getKey());
      if (asked == null
          ? !attributeKeys.contains(entry.getKey())
          : !asked.equals(entry.getValue())) {
        return false;
      }
    }
    return kept.keySet().containsAll(requested.keySet());
  }

  private static java.util.Map<String, String> nonNull(java.util.Map<String, String> map) {
    return map == null ? java.util.Map.of() : map;
  }

  private Volume createFrom(VolumeRequest request, Pool pool, String fsType, ContentSource source) {
    // The attributes are checked before any reserve; the mutable ones are kept in the record.
    java.util.Map<String, String> mutableParameters = attributes.check(pool, request, fsType);
    Origin origin = origin(source, request.accessType(), fsType, pool);
    // A copy's content was made with its source's attributes (its encryption): it keeps them.
    java.util.Map<String, String> parameters =
        origin == null
            ? nonNull(request.parameters())
            : attributes.copiedParameters(origin.parameters(), request.parameters());
    long minimum = Sizes.minimumFor(request.accessType(), fsType);
    if (origin != null) {
      // A copy below its source's size is not refused but made as large as the source: a
      // snapshot reports the size its source was asked for, which may be below its image's.
      minimum = Math.max(minimum, origin.bytes());
      if (request.limitBytes() > 0 && request.limitBytes() < origin.bytes()) {
        throw StorageException.outOfRange(
            "the %s holds %d bytes; a volume made from it cannot be limited to %d bytes",
            origin.shown(), origin.bytes(), request.limitBytes());
      }
    }
    // A copy with no size of its own is as large as what it copies, not the blank default.
    long required = request.requiredBytes();
    if (origin != null && required == 0 && request.limitBytes() == 0) {
      required = origin.bytes();
    }
    long size = Sizes.resolve(required, request.limitBytes(), minimum);
    long requested = request.requiredBytes() > 0 ? request.requiredBytes() : size;
    String id = Ids.newVolumeId();
    pool.reserve(id, size);
    VolumeRecord record =
        new VolumeRecord(
            id,
            request.name(),
            pool.name(),
            size,
            requested,
            request.accessType(),
            fsType,
            source,
            Instant.now(),
            RecordState.READY,
            parameters,
            "",
            Optional.empty(),
            mutableParameters);
    Path image = pool.volumeImage(id);
    VolumeBackend backend = backends.of(pool);
    try {
      if (origin == null) {
        backend.create(pool, image, size);
      } else {
        origin.copy().into(image, pool, size);
        backend.grow(pool, image, size);
      }
      catalog.saveVolume(record);
      LOG.info(
          "created volume {} ({} bytes, {}) in pool {}", id, size, describe(record), pool.name());
      return record.toVolume(VolumeCondition.HEALTHY);
    } catch (RuntimeException e) {
      undoCreate(record, image, pool);
      throw wrap("cannot create volume", e);
    }
  }

  private static String describe(VolumeRecord record) {
    return record.accessType() == AccessType.BLOCK ? "block" : record.fsType();
  }

  private void undoCreate(VolumeRecord record, Path image, Pool pool) {
    try {
      backends.of(pool).delete(image);
      catalog.forgetVolume(record);
    } catch (IOException | RuntimeException cleanup) {
      // Recovery at the next start removes what is left: an image without a record.
      LOG.error("cannot clean up failed volume {}: {}", record.id(), cleanup.toString());
    } finally {
      pool.release(record.id());
    }
  }

  private Origin origin(ContentSource source, AccessType accessType, String fsType, Pool target) {
    if (source instanceof ContentSource.FromSnapshot s) {
      var held = catalog.snapshot(s.snapshotId());
      if (held.isEmpty() && Ids.isSnapshotId(s.snapshotId())) {
        // Not this node's: the node that holds it, if any, copies it over the data path.
        var elsewhere = remote.find(s.snapshotId());
        if (elsewhere.isPresent()) {
          return remoteOrigin(elsewhere.get(), accessType, fsType, target);
        }
      }
      SnapshotRecord snapshot =
          held.filter(r -> r.state() == RecordState.READY)
              .orElseThrow(
                  () ->
                      StorageException.notFound(
                          "snapshot %s does not exist", Catalog.shown(s.snapshotId())));
      Pool from = catalog.pool(snapshot.pool());
      checkCopyable(from, target, "snapshot", snapshot.id());
      checkCompatible(snapshot.accessType(), snapshot.fsType(), accessType, fsType, "snapshot");
      Path image = catalog.image(snapshot);
      return new Origin(
          snapshot.sizeBytes(),
          "snapshot " + snapshot.id(),
          (into, pool, size) -> copier.copy(image, into, pool, from == pool),
          snapshot.sourceParameters());
    }
    if (source instanceof ContentSource.FromVolume v) {
      if (catalog.volume(v.volumeId()).isEmpty() && Ids.isVolumeId(v.volumeId())) {
        // Not this node's: the node that holds it, if any, copies it over the data path.
        var elsewhere = remote.findVolume(v.volumeId());
        if (elsewhere.isPresent()) {
          return remoteOrigin(elsewhere.get(), accessType, fsType, target);
        }
      }
      VolumeRecord volume = catalog.readyVolume(v.volumeId());
      Pool from = catalog.pool(volume.pool());
      checkCopyable(from, target, "source volume", volume.id());
      checkCompatible(volume.accessType(), volume.fsType(), accessType, fsType, "source volume");
      Path image = catalog.image(volume);
      return new Origin(
          volume.capacityBytes(),
          "source volume " + volume.id(),
          (into, pool, size) -> copier.copyVolume(volume, image, into, pool, from == pool),
          volume.parameters());
    }
    return null;
  }

  /**
   * A snapshot of another node, or a volume of another node (copied as that node's point-in-time
   * copy of it), checked against the request and the target pool.
   */
  private Origin remoteOrigin(
      RemoteSnapshot snapshot, AccessType accessType, String fsType, Pool target) {
    remote.checkTarget(snapshot, target);
    String snapshotFs = Objects.requireNonNullElse(snapshot.fsType(), "");
    checkCompatible(snapshot.accessType(), snapshotFs, accessType, fsType, snapshot.shown());
    return new Origin(
        snapshot.sizeBytes(),
        snapshot.shown() + " on node " + snapshot.node(),
        (into, pool, size) -> remote.copy(snapshot, into, pool, size),
        java.util.Map.of());
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

  private static void checkCompatible(
      AccessType haveAccess, String haveFs, AccessType wantAccess, String wantFs, String what) {
    if (haveAccess != wantAccess || !haveFs.equals(wantFs)) {
      throw StorageException.invalid(
          "the %s holds a %s volume; it cannot become a %s volume",
          what,
          haveAccess == AccessType.BLOCK ? "block" : haveFs,
          wantAccess == AccessType.BLOCK ? "block" : wantFs);
    }
  }

  void delete(String volumeId) {
    if (!Ids.isVolumeId(volumeId)) {
      return; // no volume can have this ID: deleting it is trivially done
    }
    try (KeyedLocks.Held lock = locks.volume(volumeId)) {
      var found = catalog.volume(volumeId);
      if (found.isEmpty()) {
        return;
      }
      VolumeRecord record = found.get();
      Path image = catalog.image(record);
      Pool pool = catalog.pool(record.pool());
      VolumeBackend backend = backends.of(pool);
      // What is really attached or mounted decides, not the record: after a node reboot stagedAt
      // may be stale, and such a volume must still be deletable.
      if (presentations.of(pool).inUse(pool, image)) {
        throw StorageException.precondition(
            "volume %s is staged on this node; unstage it before deleting", volumeId);
      }
      catalog.forgetVolume(record);
      backend.delete(image);
      catalog.pool(record.pool()).release(volumeId);
      LOG.info("deleted volume {}", volumeId);
    } catch (IOException e) {
      throw StorageException.internal("cannot delete volume " + volumeId, e);
    }
  }

  ExpandResult expand(String volumeId, long requiredBytes, long limitBytes) {
    try (KeyedLocks.Held lock = locks.volume(volumeId)) {
      VolumeRecord record = catalog.readyVolume(volumeId);
      long size = grantGrowth(record, requiredBytes, limitBytes);
      // Growing the sparse file now costs nothing and lets an unattached block volume be used at
      // its new size at once; an attached loop device and any filesystem grow on the node. A
      // directory volume's limit is all there is: raised here, it leaves the node nothing to do.
      Path image = catalog.image(record);
      Pool pool = catalog.pool(record.pool());
      VolumeBackend backend = backends.of(pool);
      if (backend.exists(image)) {
        backend.grow(pool, image, size);
      }
      return new ExpandResult(size, presentations.of(pool).expandsOnNode(record, image));
    }
  }

  /**
   * Checks a growth request against the volume and reserves the new size in its pool; returns the
   * volume's capacity afterwards. A request above the recorded requested capacity is recorded even
   * when the floor-rounded capacity already covers it, so that a snapshot taken afterwards reports
   * the claim's new size. Callers hold the volume's lock.
   */
  long grantGrowth(VolumeRecord record, long requiredBytes, long limitBytes) {
    if (requiredBytes <= 0 && limitBytes <= 0) {
      throw StorageException.invalid("a capacity range is required to expand a volume");
    }
    if (limitBytes > 0 && limitBytes < record.capacityBytes()) {
      throw StorageException.outOfRange(
          "volume %s has %d bytes; volumes cannot shrink to %d",
          record.id(), record.capacityBytes(), limitBytes);
    }
    long minimum = Sizes.minimumFor(record.accessType(), record.fsType());
    long size = Sizes.resolve(Math.max(requiredBytes, record.capacityBytes()), limitBytes, minimum);
    long requested = Math.max(record.requestedBytes(), requiredBytes);
    if (size <= record.capacityBytes()) {
      if (requested > record.requestedBytes()) {
        saveGrowth(record, record.capacityBytes(), requested);
      }
      return record.capacityBytes();
    }
    Pool pool = catalog.pool(record.pool());
    reserveGrowth(pool, record, size, requiredBytes > 0 ? requiredBytes : limitBytes);
    try {
      saveGrowth(record, size, requested);
    } catch (RuntimeException e) {
      pool.reserve(record.id(), record.capacityBytes());
      throw e;
    }
    LOG.info("volume {} grows from {} to {} bytes", record.id(), record.capacityBytes(), size);
    return size;
  }

  /**
   * Reserves a growth in the pool. A pool without the room is OUT_OF_RANGE on every path (the
   * controller's, the node's at once, the kubelet's NodeExpandVolume): the code external-resizer
   * takes as infeasible, so a user may lower the request back, where RESOURCE_EXHAUSTED would be
   * retried forever.
   */
  private static void reserveGrowth(Pool pool, VolumeRecord record, long size, long asked) {
    try {
      pool.reserve(record.id(), size);
    } catch (PoolException e) {
      if (e.kind() != PoolException.Kind.NO_SPACE) {
        throw e;
      }
      throw StorageException.outOfRange(
          "volume %s cannot grow from %d bytes to %d: %s; it stays usable at %d bytes",
          record.id(), record.capacityBytes(), asked, e.getMessage(), record.capacityBytes());
    }
  }

  private void saveGrowth(VolumeRecord record, long capacity, long requested) {
    try {
      catalog.saveVolume(record.withCapacity(capacity, requested));
    } catch (RuntimeException e) {
      throw wrap("cannot record the new size", e);
    }
  }

  static StorageException wrap(String what, RuntimeException e) {
    if (e instanceof StorageException se) {
      return se;
    }
    if (e instanceof UncheckedIOException io) {
      return StorageException.internal(what + ": " + io.getCause().getMessage(), io);
    }
    return StorageException.internal(what + ": " + e, e);
  }
}
