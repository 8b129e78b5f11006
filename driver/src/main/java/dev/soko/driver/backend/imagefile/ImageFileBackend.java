package dev.soko.driver.backend.imagefile;

import dev.soko.driver.backend.BlockMaps;
import dev.soko.driver.backend.NodeSide;
import dev.soko.driver.backend.StorageTraits;
import dev.soko.driver.backend.VolumeBackend;
import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.exec.Exec;
import dev.soko.driver.mount.LoopDevices;
import dev.soko.driver.pool.ImageFiles;
import dev.soko.driver.pool.Pool;
import dev.soko.driver.pool.PoolVerdict;
import dev.soko.driver.pool.VolumeLayout;
import dev.soko.driver.state.Ids;
import dev.soko.driver.sys.Syscalls;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * The first backend: a volume is a sparse image file in its pool's directory ({@link ImageFiles}),
 * attached through a loop device ({@link LoopDevices}). It adds no policy of its own, so that
 * moving the engine onto the seam changed no behaviour.
 */
public final class ImageFileBackend implements VolumeBackend {
  private static final StorageTraits TRAITS =
      StorageTraits.of(
          PoolConfig.Backend.IMAGE_FILE, true, "image file", new VolumeLayout("images", ".img"));

  private final Exec exec;
  private final ImageFileDevices devices;
  private final BlockMaps blockMaps;

  /**
   * Over {@code loops}; {@code exec} runs the copies, {@code syscalls} read the images' extent
   * maps.
   */
  public ImageFileBackend(Exec exec, LoopDevices loops, Syscalls syscalls) {
    this.exec = exec;
    this.devices = new ImageFileDevices(loops);
    this.blockMaps = new ImageBlockMaps(syscalls);
  }

  /** The pool's image files, copied by reflink where its filesystem can. */
  private ImageFiles files(Pool pool) {
    return new ImageFiles(exec, pool.reflink());
  }

  @Override
  public void create(Pool pool, Path location, long bytes) {
    files(pool).createSparse(location, bytes);
  }

  @Override
  public void copy(Pool targetPool, Path source, Path target, boolean samePool) {
    if (samePool) {
      files(targetPool).copy(source, target);
    } else {
      // Reflinks cannot cross filesystems.
      files(targetPool).sparseCopy(source, target);
    }
  }

  @Override
  public void snapshot(Pool pool, Path source, Path target) {
    files(pool).copy(source, target);
    target.toFile().setReadOnly(); // a snapshot never changes; make accidents visible
  }

  @Override
  public StorageTraits traits() {
    return TRAITS;
  }

  /** Volumes are attached as loop devices. */
  @Override
  public NodeSide nodeSide() {
    return devices;
  }

  @Override
  public boolean exists(Path location) {
    return Files.isRegularFile(location);
  }

  @Override
  public void delete(Path location) throws IOException {
    Files.deleteIfExists(location);
  }

  @Override
  public void grow(Pool pool, Path location, long bytes) {
    files(pool).grow(location, bytes);
  }

  /**
   * Nothing: a grown image is flushed as it grows (ImageFiles.grow), and a blank one lost with its
   * create is recovery's to make again.
   */
  @Override
  public boolean restoreUncommitted(Pool pool, Path location, long bytes) {
    return false;
  }

  /** Nothing: a deleted image leaves nothing behind. */
  @Override
  public int tidy(Pool pool) {
    return 0;
  }

  /** Image files need nothing of the pool's filesystem beyond what every pool is checked for. */
  @Override
  public PoolVerdict checkPool(Path directory, Path resolved) {
    return PoolVerdict.READY;
  }

  /** An image is the block device its volume's filesystem (or a block volume's user) sees. */
  @Override
  public Optional<BlockMaps> blockMaps() {
    return Optional.of(blockMaps);
  }

  @Override
  public long size(Pool pool, Path location) {
    return files(pool).size(location);
  }

  @Override
  public List<Path> stored(Pool pool) {
    return pool.locations();
  }

  @Override
  public Optional<String> idOf(Path location) {
    Path file = location.getFileName();
    String name = file == null ? "" : file.toString();
    String id = name.endsWith(".img") ? name.substring(0, name.length() - 4) : "";
    return Ids.isVolumeId(id) || Ids.isSnapshotId(id) || Ids.isReadCopyId(id)
        ? Optional.of(id)
        : Optional.empty();
  }
}
