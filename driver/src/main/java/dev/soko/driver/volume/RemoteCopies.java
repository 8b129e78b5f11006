package dev.soko.driver.volume;

import dev.soko.driver.backend.Backends;
import dev.soko.driver.backend.CopyForm;
import dev.soko.driver.backend.StorageTraits;
import dev.soko.driver.extent.RangeCursor;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.pool.Pool;
import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The restore's and clone's side of the node-to-node data path: which pools take another node's
 * snapshot or volume, the {@link VolumeOrigin} it is, and the copy itself, logged with the node and
 * the bytes it wrote. {@link VolumeProvisioner} sizes, reserves, records and undoes the copy as it
 * does a local one.
 */
final class RemoteCopies {
  private static final Logger LOG = LoggerFactory.getLogger(RemoteCopies.class);

  private final RemoteSnapshots snapshots;
  private final Backends backends;

  RemoteCopies(RemoteSnapshots snapshots, Backends backends) {
    this.snapshots = snapshots;
    this.backends = backends;
  }

  /** The snapshot as the node that holds it describes it; empty when no node is known to. */
  Optional<RemoteSnapshot> find(String snapshotId) {
    return snapshots.find(snapshotId);
  }

  /** The volume as the node that holds it describes it; empty when no node is known to. */
  Optional<RemoteSnapshot> findVolume(String volumeId) {
    return snapshots.findVolume(volumeId);
  }

  /**
   * Refuses a target pool that cannot take the copy: an image lands only in a pool whose volumes
   * are image files copied between pools, a tree of files only in one whose volumes are directories
   * ({@link CopyForm}).
   */
  private void checkTarget(RemoteSnapshot snapshot, Pool target) {
    StorageTraits traits = backends.of(target).traits();
    boolean takes =
        traits.copyForm() == snapshot.form()
            && (snapshot.form() == CopyForm.FILE_TREE || traits.copiesAcrossPools());
    if (!takes) {
      throw StorageException.invalid(
          "the %s is on node %s; a %s on another node is a copy of its %s over the node-to-node"
              + " data path, and pool %s (backend %s) does not take it: %s it on node %s, or into"
              + " a pool whose volumes are %s",
          snapshot.shown(),
          snapshot.node(),
          verb(snapshot, "restore", "clone"),
          snapshot.form() == CopyForm.IMAGE ? "image" : "tree of files",
          target.name(),
          traits.flagName(),
          verb(snapshot, "restore", "clone"),
          snapshot.node(),
          snapshot.form() == CopyForm.IMAGE ? "image files" : "directories (btrfs-subvolume)");
    }
  }

  /**
   * A snapshot of another node, or a volume of another node (copied as that node's point-in-time
   * copy of it), checked against the request and the target pool.
   */
  VolumeOrigin origin(RemoteSnapshot snapshot, AccessType accessType, String fsType, Pool target) {
    checkTarget(snapshot, target);
    String snapshotFs = Objects.requireNonNullElse(snapshot.fsType(), "");
    VolumeOrigin.checkCompatible(
        snapshot.accessType(), snapshotFs, accessType, fsType, snapshot.shown());
    return new VolumeOrigin(
        snapshot.sizeBytes(),
        snapshot.shown() + " on node " + snapshot.node(),
        (into, pool, size) -> copy(snapshot, into, pool, size),
        Map.of());
  }

  private static String verb(RemoteSnapshot source, String ofSnapshot, String ofVolume) {
    return source.ofVolume() ? ofVolume : ofSnapshot;
  }

  /**
   * Writes the snapshot into {@code into}, a new volume's storage of {@code size} bytes in {@code
   * pool}. A tree of files is written into the new volume made first, so that its limit holds from
   * the first byte.
   */
  private void copy(RemoteSnapshot snapshot, Path into, Pool pool, long size) {
    long started = System.nanoTime();
    if (snapshot.form() == CopyForm.FILE_TREE) {
      backends.of(pool).create(pool, into, size);
    }
    snapshot.copyTo(into);
    LOG.atInfo()
        .addKeyValue("source", snapshot.shown())
        .addKeyValue("node", snapshot.node())
        .addKeyValue("bytes", allocatedBytes(into, pool, snapshot.sizeBytes()))
        .addKeyValue("size", snapshot.sizeBytes())
        .addKeyValue("ms", (System.nanoTime() - started) / 1_000_000)
        .log("copied {} from node {} into pool {}", snapshot.shown(), snapshot.node(), pool.name());
  }

  /** The bytes a copy wrote (its allocated ranges), for the log; -1 when they cannot be told. */
  private long allocatedBytes(Path image, Pool pool, long size) {
    var maps = backends.of(pool).blockMaps();
    if (maps.isEmpty()) {
      return -1;
    }
    long total = 0;
    try (RangeCursor ranges = maps.get().allocated(image, 0, size)) {
      for (var r = ranges.next(); r.isPresent(); r = ranges.next()) {
        total += r.get().length();
      }
      return total;
    } catch (RuntimeException e) {
      return -1;
    }
  }
}
