package dev.soko.driver.pool;

import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.exec.Exec;
import dev.soko.driver.mount.VolumeGeometry;
import dev.soko.driver.state.Ids;
import dev.soko.driver.state.RecordStore;
import dev.soko.driver.volume.PoolCapacity;
import dev.soko.driver.volume.StorageException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.FileStore;
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
 * snapshots ({@code snapshots/<id>.img}) and their records ({@code .soko/volumes}, {@code
 * .soko/snapshots}). It owns the space accounting: every volume and snapshot reserves its size, and
 * the sum of reservations may not exceed the pool's size times its over-provisioning ratio. Every
 * path it hands out is built from a validated ID.
 */
public final class Pool implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Pool.class);

  private final PoolConfig config;
  private final ImageFiles files;
  private final Path images;
  private final Path snapshots;
  private final RecordStore volumeRecords;
  private final RecordStore snapshotRecords;
  private final long physicalBytes;
  private final int blockSize;
  private final Map<String, Long> reservations = new HashMap<>();

  /** The sum of {@link #reservations}, kept with it: a create asks for it. Guarded by "this". */
  private long provisioned;

  private Pool(PoolConfig config, ImageFiles files, long physicalBytes) {
    this.config = config;
    this.files = files;
    this.images = config.path().resolve("images");
    this.snapshots = config.path().resolve("snapshots");
    // A blank image is not flushed when made (see ImageFiles.createSparse); a checkpoint, after
    // which recovery no longer remakes a missing image, flushes it first.
    this.volumeRecords =
        new RecordStore(
            config.path().resolve(".soko/volumes"),
            Ids::isVolumeId,
            id -> fsyncIfPresent(images.resolve(id + ".img")));
    this.snapshotRecords =
        new RecordStore(config.path().resolve(".soko/snapshots"), Ids::isSnapshotId);
    this.physicalBytes = physicalBytes;
    this.blockSize = VolumeGeometry.poolBlockSize(config.path());
  }

  /**
   * Opens (and on first use lays out) a pool directory and probes whether it supports reflinks.
   *
   * @throws StorageException UNAVAILABLE when the directory is not usable
   */
  public static Pool open(PoolConfig config, Exec exec) {
    Path root = config.path();
    if (!root.isAbsolute()) {
      throw new StorageException(
          StorageException.Reason.UNAVAILABLE, "pool path must be absolute: " + root);
    }
    try {
      Files.createDirectories(root.resolve("images"));
      Files.createDirectories(root.resolve("snapshots"));
      Files.createDirectories(root.resolve(".soko"));
      long physical = config.capacityBytes();
      if (physical <= 0) {
        physical = freeSpaceBaseline(root);
      }
      ImageFiles files = new ImageFiles(exec, ImageFiles.probeReflink(exec, root.resolve(".soko")));
      Pool pool = new Pool(config, files, physical);
      LOG.info(
          "pool {} at {}: {} bytes x {} over-provisioning, reflink {}",
          config.name(),
          root,
          physical,
          config.overprovisionRatio(),
          files.reflink() ? "supported" : "unsupported (sparse copies)");
      return pool;
    } catch (IOException e) {
      throw new StorageException(
          StorageException.Reason.UNAVAILABLE, "pool " + config.name() + " is not usable: " + e, e);
    }
  }

  /**
   * A pool configured with capacity 0 may use the free space of its filesystem. Measured at open
   * and counting the images the pool already holds (they are this pool's, not someone else's use),
   * so the figure stays put while the process runs instead of shrinking as volumes fill.
   */
  private static long freeSpaceBaseline(Path root) throws IOException {
    FileStore store = Files.getFileStore(root);
    long held = apparentSize(root.resolve("images")) + apparentSize(root.resolve("snapshots"));
    return Math.min(store.getTotalSpace(), store.getUsableSpace() + held);
  }

  private static long apparentSize(Path dir) throws IOException {
    long total = 0;
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir, "*.img")) {
      for (Path entry : entries) {
        total += Files.size(entry);
      }
    }
    return total;
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

  public ImageFiles files() {
    return files;
  }

  public RecordStore volumeRecords() {
    return volumeRecords;
  }

  public RecordStore snapshotRecords() {
    return snapshotRecords;
  }

  public Path imagesDir() {
    return images;
  }

  public Path snapshotsDir() {
    return snapshots;
  }

  public Path volumeImage(String volumeId) {
    if (!Ids.isVolumeId(volumeId)) {
      throw StorageException.invalid("not a volume ID");
    }
    return images.resolve(volumeId + ".img");
  }

  public Path snapshotImage(String snapshotId) {
    if (!Ids.isSnapshotId(snapshotId)) {
      throw StorageException.invalid("not a snapshot ID");
    }
    return snapshots.resolve(snapshotId + ".img");
  }

  /** The image files present in the pool, volumes and snapshots alike. */
  public List<Path> imageFiles() {
    try (var a = Files.list(images);
        var b = Files.list(snapshots)) {
      return java.util.stream.Stream.concat(a, b).toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  // ---- accounting ------------------------------------------------------------------------

  public long totalBytes() {
    return (long) (physicalBytes * Math.max(1.0, config.overprovisionRatio()));
  }

  public synchronized long provisionedBytes() {
    return provisioned;
  }

  /**
   * Reserves {@code bytes} for a volume or snapshot ID, replacing its earlier reservation.
   *
   * @throws StorageException RESOURCE_EXHAUSTED when the pool cannot back the growth
   */
  public synchronized void reserve(String id, long bytes) {
    long growth = bytes - reservations.getOrDefault(id, 0L);
    long available = totalBytes() - provisionedBytes();
    if (growth > available) {
      throw StorageException.exhausted(
          "pool %s has %d bytes available, %d more are needed", name(), available, growth);
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
   * #provisionedBytes}: sparse images take only what was written and not discarded since.
   * GetCapacity stays the logical headroom. Runs du: for reports, not for every call.
   */
  public long allocatedBytes() {
    return files.allocatedBytes(List.of(images, snapshots));
  }

  public synchronized PoolCapacity capacity() {
    long available = Math.max(0, totalBytes() - provisionedBytes());
    return new PoolCapacity(name(), totalBytes(), available, available / Sizes.MIB * Sizes.MIB);
  }

  /** Writes every record file up to date and closes the pool's journals. */
  @Override
  public void close() {
    volumeRecords.close();
    snapshotRecords.close();
  }

  private static void fsyncIfPresent(Path file) {
    if (Files.isRegularFile(file)) {
      fsync(file);
    }
  }

  /** Flushes a file's data and metadata to disk. */
  public static void fsync(Path file) {
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
      channel.force(true);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot fsync " + file, e);
    }
  }
}
