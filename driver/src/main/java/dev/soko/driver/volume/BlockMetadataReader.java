package dev.soko.driver.volume;

import dev.soko.driver.backend.Backends;
import dev.soko.driver.backend.BlockMaps;
import dev.soko.driver.backend.CopyForm;
import dev.soko.driver.backend.StorageTraits;
import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.extent.ByteRange;
import dev.soko.driver.extent.RangeCursor;
import dev.soko.driver.pool.Pool;
import dev.soko.driver.state.RecordState;
import dev.soko.driver.state.SnapshotRecord;
import dev.soko.driver.sys.Errno;
import dev.soko.driver.sys.SyscallException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Answers changed block tracking from the snapshots' block maps ({@link BlockMaps}). It takes no
 * lock: a metadata read changes nothing, and a snapshot deleted while it is read is noticed between
 * batches ({@link BlockStream}) or when its image is opened.
 */
final class BlockMetadataReader implements SnapshotBlocks {
  private final Catalog catalog;
  private final Backends backends;
  private final boolean served;

  BlockMetadataReader(Catalog catalog, Backends backends, List<PoolConfig> pools) {
    this.catalog = catalog;
    this.backends = backends;
    this.served = pools.stream().anyMatch(p -> backends.of(p.backend()).blockMaps().isPresent());
  }

  @Override
  public boolean servesBlockMetadata() {
    return served;
  }

  @Override
  public BlockStream allocatedBlocks(String snapshotId, long startingOffset) {
    SnapshotRecord snapshot = readySnapshot(snapshotId);
    BlockMaps maps = blockMaps(snapshot);
    long capacity = snapshot.sizeBytes();
    checkOffset(startingOffset, snapshot);
    RangeCursor ranges =
        opening(
            () -> maps.allocated(catalog.location(snapshot), startingOffset, capacity),
            List.of(snapshot));
    return new BlockStream(capacity, ranges, () -> deleted(List.of(snapshot)));
  }

  @Override
  public BlockStream changedBlocks(
      String baseSnapshotId, String targetSnapshotId, long startingOffset) {
    SnapshotRecord base = readySnapshot(baseSnapshotId);
    SnapshotRecord target = readySnapshot(targetSnapshotId);
    if (!base.sourceVolumeId().equals(target.sourceVolumeId())) {
      throw StorageException.invalid(
          "base snapshot %s is of volume %s and target snapshot %s of volume %s: changed blocks"
              + " are only known between snapshots of one volume",
          base.id(), base.sourceVolumeId(), target.id(), target.sourceVolumeId());
    }
    BlockMaps maps = blockMaps(target);
    long capacity = target.sizeBytes();
    checkOffset(startingOffset, target);
    Path baseImage = catalog.location(base);
    Path targetImage = catalog.location(target);
    List<SnapshotRecord> both = List.of(base, target);
    RangeCursor ranges =
        opening(() -> maps.changed(baseImage, targetImage, startingOffset, capacity), both);
    return new BlockStream(capacity, ranges, () -> deleted(both));
  }

  /**
   * The ready snapshot's image (or its tree's root), for a copy to another node; see {@link
   * SnapshotImages}.
   */
  SnapshotImage snapshotSource(String snapshotId) {
    SnapshotRecord snapshot = readySnapshot(snapshotId);
    Pool pool = catalog.pool(snapshot.pool());
    return new SnapshotImage(
        snapshot.id(),
        snapshot.pool(),
        snapshot.sizeBytes(),
        snapshot.accessType(),
        snapshot.fsType(),
        catalog.location(snapshot),
        backends.of(pool).traits().copyForm());
  }

  /** The ready snapshot of form FILE_TREE as a tree to read; see {@link SnapshotImages}. */
  FileTree snapshotTree(String snapshotId) {
    SnapshotRecord snapshot = readySnapshot(snapshotId);
    Pool pool = catalog.pool(snapshot.pool());
    StorageTraits traits = backends.of(pool).traits();
    if (traits.copyForm() != CopyForm.FILE_TREE) {
      throw StorageException.precondition(
          "snapshot %s is in pool %s of backend %s, whose snapshots are images: it is read as"
              + " an image, not as a tree of files",
          snapshot.id(), pool.name(), traits.flagName());
    }
    return new FileTree(
        "snapshot " + snapshot.id(),
        catalog.location(snapshot),
        () ->
            deleted(List.of(snapshot))
                .map(why -> "snapshot " + snapshot.id() + " was deleted while it was read"),
        () -> {});
  }

  private SnapshotRecord readySnapshot(String id) {
    return catalog
        .snapshot(id)
        .filter(s -> s.state() == RecordState.READY)
        .orElseThrow(
            () -> StorageException.notFound("snapshot %s does not exist", Catalog.shown(id)));
  }

  private BlockMaps blockMaps(SnapshotRecord snapshot) {
    Pool pool = catalog.pool(snapshot.pool());
    StorageTraits traits = backends.of(pool).traits();
    return backends
        .of(pool)
        .blockMaps()
        .orElseThrow(
            () ->
                StorageException.precondition(
                    "snapshot %s is in pool %s of backend %s, whose volumes are not block device"
                        + " images: it has no block metadata to list",
                    snapshot.id(), pool.name(), traits.flagName()));
  }

  private static void checkOffset(long startingOffset, SnapshotRecord snapshot) {
    if (startingOffset < 0 || startingOffset > snapshot.sizeBytes()) {
      throw StorageException.outOfRange(
          "starting_offset %d is outside snapshot %s, which has %d bytes",
          startingOffset, snapshot.id(), snapshot.sizeBytes());
    }
  }

  /**
   * Opens the images, and reads them, with failures said in the client's terms: an image that a
   * delete took away first is NOT_FOUND, not a failed call.
   */
  private RangeCursor opening(Supplier<RangeCursor> open, List<SnapshotRecord> snapshots) {
    RangeCursor cursor;
    try {
      cursor = open.get();
    } catch (SyscallException e) {
      throw failure(e, snapshots);
    }
    return new RangeCursor() {
      @Override
      public Optional<ByteRange> next() {
        try {
          return cursor.next();
        } catch (SyscallException e) {
          throw failure(e, snapshots);
        }
      }

      @Override
      public void close() {
        cursor.close();
      }
    };
  }

  /**
   * What a failed read of the block maps tells the client: that a snapshot went away, that the
   * pool's filesystem cannot list extents, or (a fault of the host) which call failed, without the
   * host's paths.
   */
  private StorageException failure(SyscallException e, List<SnapshotRecord> snapshots) {
    Optional<String> gone = deleted(snapshots);
    if (gone.isPresent()) {
      return StorageException.notFound("%s", gone.get());
    }
    SnapshotRecord target = snapshots.get(snapshots.size() - 1);
    if (e.errno() == Errno.EOPNOTSUPP) {
      return StorageException.precondition(
          "the filesystem of pool %s cannot list a file's extents (FIEMAP), so snapshot %s has no"
              + " block metadata",
          target.pool(), target.id());
    }
    return StorageException.internal(
        "cannot read the block map of snapshot " + target.id() + ": " + e.errnoName(), e);
  }

  /** Why {@code snapshots} can no longer be answered for: one of them was deleted; or empty. */
  private Optional<String> deleted(List<SnapshotRecord> snapshots) {
    return snapshots.stream()
        .filter(s -> catalog.snapshot(s.id()).filter(r -> r.state() == RecordState.READY).isEmpty())
        .findFirst()
        .map(s -> "snapshot " + s.id() + " was deleted while its block metadata was read");
  }
}
