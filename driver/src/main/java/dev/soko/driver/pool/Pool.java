package dev.soko.driver.pool;

import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.exec.Exec;
import dev.soko.driver.model.PoolCapacity;
import dev.soko.driver.mount.VolumeGeometry;
import dev.soko.driver.state.Ids;
import dev.soko.driver.state.RecordStore;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A pool: a host directory holding sparse image files for volumes ({@code images/<id>.img}) and
 * snapshots ({@code snapshots/<id>.img}), or for a btrfs-subvolume pool subvolumes ({@code
 * volumes/<id>}, {@code snapshots/<id>}), their records ({@code .soko/volumes}, {@code
 * .soko/snapshots}, and {@code .soko/groups} for volume group snapshots) and the number of its
 * on-disk format ({@link PoolFormat}). It owns the space accounting: every volume and snapshot
 * reserves its size, and the sum of reservations may not exceed the pool's size times its
 * over-provisioning ratio. Growth is also refused beyond the physical free space of the pool's
 * filesystem, read (statfs) whenever asked: sparse images over-promise, and a physically full pool
 * must take no new volumes while its logical numbers still look healthy. Every path it hands out is
 * built from a validated ID.
 */
public final class Pool implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Pool.class);

  private final PoolConfig config;
  private final ImageFiles files;
  private final Path images;
  private final Path snapshots;

  /** What follows the ID in a volume's or snapshot's location: ".img" for image files. */
  private final String suffix;

  private final RecordStore volumeRecords;
  private final RecordStore snapshotRecords;
  private final RecordStore groupRecords;
  private final PoolUsage.Reader usage;
  private final int blockSize;
  private final Map<String, Long> reservations = new HashMap<>();

  /** Whether the last capacity answer was cut by physical free space; logged on each change. */
  private boolean physicallyLimited;

  /** The sum of {@link #reservations}, kept with it: a create asks for it. Guarded by "this". */
  private long provisioned;

  private Pool(PoolConfig config, VolumeLayout layout, ImageFiles files, PoolUsage.Reader usage) {
    this.config = config;
    this.files = files;
    this.images = config.path().resolve(layout.volumesDir());
    this.snapshots = config.path().resolve("snapshots");
    this.suffix = layout.suffix();
    // A blank image is not flushed when made (see ImageFiles.createSparse); a checkpoint, after
    // which recovery no longer remakes a missing image, flushes it first.
    this.volumeRecords =
        new RecordStore(
            config.path().resolve(".soko/volumes"),
            Ids::isVolumeId,
            id -> fsyncIfPresent(images.resolve(id + suffix)));
    this.snapshotRecords =
        new RecordStore(config.path().resolve(".soko/snapshots"), Ids::isSnapshotId);
    // A store of its own, which a release before group snapshots never opens: it keeps reading
    // the members as the independent snapshots they also are.
    this.groupRecords = new RecordStore(config.path().resolve(".soko/groups"), Ids::isGroupId);
    this.usage = usage;
    this.blockSize = VolumeGeometry.poolBlockSize(config.path());
  }

  /**
   * Opens (and on first use lays out) a pool directory and probes whether it supports reflinks.
   *
   * @throws PoolException UNUSABLE when the directory is not usable
   */
  public static Pool open(PoolConfig config, VolumeLayout layout, Exec exec) {
    return open(config, layout, exec, null);
  }

  /**
   * @param usage reads the pool's filesystem; null: statfs of the pool directory
   */
  public static Pool open(
      PoolConfig config, VolumeLayout layout, Exec exec, PoolUsage.Reader usage) {
    Path root = config.path();
    if (!root.isAbsolute()) {
      throw PoolException.of(PoolException.Kind.UNUSABLE, "pool path must be absolute: %s", root);
    }
    try {
      Files.createDirectories(root.resolve(".soko"));
      PoolFormat.checkOrStamp(config.name(), root.resolve(".soko"));
      Files.createDirectories(root.resolve(layout.volumesDir()));
      Files.createDirectories(root.resolve("snapshots"));
      PoolUsage.Reader reader = usage != null ? usage : PoolUsage.of(root);
      PoolUsage now = reader.read();
      ImageFiles files = new ImageFiles(exec, ImageFiles.probeReflink(exec, root.resolve(".soko")));
      Pool pool = new Pool(config, layout, files, reader);
      LOG.info(
          "pool {} at {}: {} bytes x {} over-provisioning on a filesystem of {} bytes, {} free,"
              + " reflink {}",
          config.name(),
          root,
          pool.sizeBytes(now),
          config.overprovisionRatio(),
          now.sizeBytes(),
          now.availableBytes(),
          files.reflink() ? "supported" : "unsupported (sparse copies)");
      return pool;
    } catch (IOException e) {
      throw new PoolException(
          PoolException.Kind.UNUSABLE, "pool " + config.name() + " is not usable: " + e, e);
    }
  }

  public String name() {
    return config.name();
  }

  public PoolConfig config() {
    return config;
  }

  public boolean reflink() {
    return files.reflink();
  }

  /** The pool filesystem's block size: what volumes' direct-I/O loop devices match. */
  public int blockSize() {
    return blockSize;
  }

  public RecordStore volumeRecords() {
    return volumeRecords;
  }

  public RecordStore snapshotRecords() {
    return snapshotRecords;
  }

  /** The records of the volume group snapshots whose members are in this pool. */
  public RecordStore groupRecords() {
    return groupRecords;
  }

  /** Where the pool's volumes are stored (see {@link VolumeLayout#volumesDir}). */
  public Path volumesDir() {
    return images;
  }

  public Path snapshotsDir() {
    return snapshots;
  }

  /**
   * Where a volume's storage lives: the one path a backend is handed for it (an image file, a
   * subvolume, a directory), whatever the backend keeps there.
   */
  public Path volumeLocation(String volumeId) {
    if (!Ids.isVolumeId(volumeId)) {
      throw PoolException.of(PoolException.Kind.BAD_INPUT, "not a volume ID");
    }
    return images.resolve(volumeId + suffix);
  }

  /** Where a snapshot's storage lives, beside the volumes' (see {@link #volumeLocation}). */
  public Path snapshotLocation(String snapshotId) {
    if (!Ids.isSnapshotId(snapshotId)) {
      throw PoolException.of(PoolException.Kind.BAD_INPUT, "not a snapshot ID");
    }
    return snapshots.resolve(snapshotId + suffix);
  }

  /**
   * Where a volume's temporary copy for another node's read lives, beside the snapshots: on the
   * same filesystem as the volume, so that it is a reflink where the pool shares blocks.
   */
  public Path readCopyLocation(String readCopyId) {
    if (!Ids.isReadCopyId(readCopyId)) {
      throw PoolException.of(PoolException.Kind.BAD_INPUT, "not a read copy ID");
    }
    return snapshots.resolve(readCopyId + suffix);
  }

  /** The storage locations present in the pool, volumes and snapshots alike. */
  public List<Path> locations() {
    try (var a = Files.list(images);
        var b = Files.list(snapshots)) {
      return java.util.stream.Stream.concat(a, b).toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  // ---- accounting ------------------------------------------------------------------------

  /** The pool's logical capacity: its size times the over-provisioning ratio. */
  public long totalBytes() {
    return totalBytes(usage());
  }

  private long totalBytes(PoolUsage now) {
    return (long) (sizeBytes(now) * Math.max(1.0, config.overprovisionRatio()));
  }

  /** The configured size, or (capacity 0) the whole filesystem as it is now. */
  private long sizeBytes(PoolUsage now) {
    return config.capacityBytes() > 0 ? config.capacityBytes() : now.sizeBytes();
  }

  /**
   * The pool filesystem now (statfs).
   *
   * @throws PoolException UNUSABLE when it cannot be read (the disk is gone, say)
   */
  public PoolUsage usage() {
    try {
      return usage.read();
    } catch (IOException | RuntimeException e) {
      throw new PoolException(
          PoolException.Kind.UNUSABLE,
          "cannot read the filesystem of pool " + name() + ": " + e.getMessage(),
          e);
    }
  }

  public synchronized long provisionedBytes() {
    return provisioned;
  }

  /**
   * Reserves {@code bytes} for a volume or snapshot ID, replacing its earlier reservation.
   *
   * @throws PoolException NO_SPACE when the pool cannot back the growth
   */
  public synchronized void reserve(String id, long bytes) {
    long growth = bytes - reservations.getOrDefault(id, 0L);
    if (growth > 0) {
      PoolUsage now = usage();
      long logical = totalBytes(now) - provisioned;
      if (growth > logical) {
        throw PoolException.of(
            PoolException.Kind.NO_SPACE,
            "pool %s has %d bytes available, %d more are needed",
            name(),
            logical,
            growth);
      }
      if (growth > now.availableBytes()) {
        throw PoolException.of(
            PoolException.Kind.NO_SPACE,
            "pool %s has %d bytes of logical headroom but its filesystem has only %d bytes"
                + " free, %d more are needed",
            name(),
            logical,
            now.availableBytes(),
            growth);
      }
    }
    setReservation(id, bytes);
  }

  /** Records a reservation that already exists on disk (recovery), without a capacity check. */
  public synchronized void adopt(String id, long bytes) {
    setReservation(id, bytes);
  }

  public synchronized void release(String id) {
    Long released = reservations.remove(id);
    if (released != null) {
      provisioned -= released;
    }
  }

  private void setReservation(String id, long bytes) {
    Long previous = reservations.put(id, bytes);
    provisioned += bytes - (previous == null ? 0 : previous);
  }

  /**
   * Physically allocated bytes of the pool's images and snapshots, beside {@link
   * #provisionedBytes}: sparse images take only what was written and not discarded since (the
   * filesystem-wide use in {@link PoolUsage} also counts whatever else lives on that disk). Runs
   * du: for reports, not for every call.
   */
  public long allocatedBytes() {
    return files.allocatedBytes(List.of(images, snapshots));
  }

  /**
   * What GetCapacity offers: the lower of the logical headroom (capacity × ratio − provisioned) and
   * the physical free space. A pool that cannot be read offers nothing.
   */
  public synchronized PoolCapacity capacity() {
    return report().capacity();
  }

  /** Capacity, physical use and accounting in one reading, for GetCapacity and the metrics. */
  public synchronized PoolReport report() {
    PoolUsage now;
    try {
      now = usage();
    } catch (PoolException e) {
      LOG.warn("{}", e.getMessage());
      return new PoolReport(name(), new PoolUsage(0, 0, 0), 0, provisioned, 0);
    }
    long total = totalBytes(now);
    long logical = Math.max(0, total - provisioned);
    long headroom = Math.min(logical, Math.max(0, now.availableBytes()));
    notePhysicalLimit(logical, now);
    return new PoolReport(name(), now, total, provisioned, headroom);
  }

  /** Says in the log, once per change, that the disk and not the accounting limits the pool. */
  private void notePhysicalLimit(long logical, PoolUsage now) {
    boolean limited = now.availableBytes() < logical;
    if (limited != physicallyLimited) {
      physicallyLimited = limited;
      if (limited) {
        LOG.warn(
            "pool {} is limited by its filesystem: {} bytes free of {}, below the {} bytes of"
                + " logical headroom; new volumes get at most the free space, existing ones keep"
                + " working until the disk is full",
            name(),
            now.availableBytes(),
            now.sizeBytes(),
            logical);
      } else {
        LOG.info("pool {} is no longer limited by its filesystem's free space", name());
      }
    }
  }

  /** Writes every record file up to date and closes the pool's journals. */
  @Override
  public void close() {
    volumeRecords.close();
    snapshotRecords.close();
    groupRecords.close();
  }

  private static void fsyncIfPresent(Path file) {
    if (Files.isRegularFile(file) || Files.isDirectory(file)) {
      fsync(file);
    }
  }

  /**
   * Flushes a file's data and metadata to disk; a directory (a subvolume) is opened for reading, as
   * a directory cannot be opened for writing, and fsynced the same way.
   */
  public static void fsync(Path file) {
    boolean directory = Files.isDirectory(file);
    try (FileChannel channel =
        FileChannel.open(file, directory ? StandardOpenOption.READ : StandardOpenOption.WRITE)) {
      channel.force(true);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot fsync " + file, e);
    }
  }
}
