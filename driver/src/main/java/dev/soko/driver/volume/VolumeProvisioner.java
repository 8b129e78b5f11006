package dev.soko.driver.volume;

import dev.soko.driver.backend.Backends;
import dev.soko.driver.backend.VolumeBackend;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.model.ContentSource;
import dev.soko.driver.model.Volume;
import dev.soko.driver.model.VolumeCondition;
import dev.soko.driver.pool.Pool;
import dev.soko.driver.pool.Sizes;
import dev.soko.driver.state.Ids;
import dev.soko.driver.state.RecordState;
import dev.soko.driver.state.VolumeRecord;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
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
 *
 * <p>This class holds the locks, the sizes and that order; the rest is asked of small parts: the
 * filesystem ({@link FilesystemChoice}), a repeated create's answer ({@link RepeatedCreates}), the
 * content source and its copy, this node's or another's ({@link VolumeOrigins}, {@link
 * RemoteCopies}), and a growth's check and reservation ({@link GrowthGrants}).
 */
// A KeyedLocks.Held is used only for its scope: the lock is held until the block ends.
@SuppressWarnings("try")
final class VolumeProvisioner {
  private static final Logger LOG = LoggerFactory.getLogger(VolumeProvisioner.class);

  private final Catalog catalog;
  private final VolumeLocks locks;
  private final Backends backends;
  private final Presentations presentations;
  private final VolumeAttributes attributes;
  private final FilesystemChoice filesystems;
  private final RepeatedCreates repeats;
  private final VolumeOrigins origins;
  private final GrowthGrants grants;

  VolumeProvisioner(
      Catalog catalog,
      VolumeLocks locks,
      Backends backends,
      Presentations presentations,
      VolumeCopier copier,
      VolumeAttributes attributes,
      RemoteSnapshots remote,
      GrowthGrants grants) {
    this.catalog = catalog;
    this.attributes = attributes;
    this.locks = locks;
    this.backends = backends;
    this.presentations = presentations;
    this.grants = grants;
    this.filesystems = new FilesystemChoice(backends);
    this.repeats = new RepeatedCreates(attributes);
    this.origins = new VolumeOrigins(catalog, backends, copier, new RemoteCopies(remote, backends));
  }

  Volume create(VolumeRequest request) {
    String name = Names.check("volume", request.name());
    if (request.accessType() == null) {
      throw StorageException.invalid("access type is required");
    }
    try (KeyedLocks.Held nameLock = locks.volumeName(name)) {
      Pool pool = catalog.pool(request.pool());
      String fsType = filesystems.of(request, pool);
      ContentSource source = Objects.requireNonNullElse(request.source(), ContentSource.EMPTY);
      var existing = catalog.volumeByName(name);
      if (existing.isPresent()) {
        return repeats.sameOrConflict(existing.get(), request, pool, fsType, source);
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

  private Volume createFrom(VolumeRequest request, Pool pool, String fsType, ContentSource source) {
    // The attributes are checked before any reserve; the mutable ones are kept in the record.
    Map<String, String> mutableParameters = attributes.check(pool, request, fsType);
    VolumeOrigin origin = origins.of(source, request.accessType(), fsType, pool);
    // A copy's content was made with its source's attributes (its encryption): it keeps them.
    Map<String, String> parameters =
        origin == null
            ? Objects.requireNonNullElse(request.parameters(), Map.of())
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
    Path image = pool.volumeLocation(id);
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
      throw StorageException.wrap("cannot create volume", e);
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
      Path image = catalog.location(record);
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
      long size = grants.grant(record, requiredBytes, limitBytes);
      // Growing the sparse file now costs nothing and lets an unattached block volume be used at
      // its new size at once; an attached loop device and any filesystem grow on the node. A
      // directory volume's limit is all there is: raised here, it leaves the node nothing to do.
      Path image = catalog.location(record);
      Pool pool = catalog.pool(record.pool());
      VolumeBackend backend = backends.of(pool);
      if (backend.exists(image)) {
        backend.grow(pool, image, size);
      }
      return new ExpandResult(size, presentations.of(pool).expandsOnNode(record, image));
    }
  }
}
