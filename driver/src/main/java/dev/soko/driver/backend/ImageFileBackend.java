package dev.soko.driver.backend;

import dev.soko.driver.mount.LoopDevice;
import dev.soko.driver.mount.LoopDevices;
import dev.soko.driver.pool.Pool;
import dev.soko.driver.state.Ids;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The first backend: a volume is a sparse image file in its pool's directory ({@code
 * pool.files()}), attached through a loop device ({@link LoopDevices}). It adds no policy of its
 * own, so that moving the engine onto the seam changed no behaviour.
 */
public final class ImageFileBackend implements VolumeBackend {
  private final LoopDevices loops;

  public ImageFileBackend(LoopDevices loops) {
    this.loops = loops;
  }

  @Override
  public void create(Pool pool, Path location, long bytes) {
    pool.files().createSparse(location, bytes);
  }

  @Override
  public void copy(Pool targetPool, Path source, Path target, boolean samePool) {
    if (samePool) {
      targetPool.files().copy(source, target);
    } else {
      // Reflinks cannot cross filesystems.
      targetPool.files().sparseCopy(source, target);
    }
  }

  @Override
  public void snapshot(Pool pool, Path source, Path target) {
    pool.files().copy(source, target);
    target.toFile().setReadOnly(); // a snapshot never changes; make accidents visible
  }

  @Override
  public Optional<DirectoryVolumes> directories() {
    return Optional.empty(); // volumes are attached as loop devices
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
    pool.files().grow(location, bytes);
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

  @Override
  public long size(Pool pool, Path location) {
    return pool.files().size(location);
  }

  @Override
  public String attach(Path location, int directIoBlockSize) {
    return loops.attach(location, directIoBlockSize);
  }

  @Override
  public void detach(String device) {
    loops.detach(device);
  }

  @Override
  public void refreshSize(String device) {
    loops.refreshSize(device);
  }

  @Override
  public List<String> devices(Path location) {
    return loops.devicesFor(location);
  }

  @Override
  public List<String> devicesHolding(Path location) {
    return loops.devicesHolding(location);
  }

  @Override
  public List<LoopDevice> inventory() {
    return loops.list();
  }

  @Override
  public List<String> backedBy(List<LoopDevice> inventory, Path location, boolean deletedToo) {
    return loops.backedBy(inventory, location, deletedToo);
  }

  @Override
  public List<Path> stored(Pool pool) {
    return pool.imageFiles();
  }

  @Override
  public Optional<String> idOf(Path location) {
    Path file = location.getFileName();
    String name = file == null ? "" : file.toString();
    String id = name.endsWith(".img") ? name.substring(0, name.length() - 4) : "";
    return Ids.isVolumeId(id) || Ids.isSnapshotId(id) ? Optional.of(id) : Optional.empty();
  }

  /**
   * The loop devices backed by a file in the pool's image directories, with that file. The kernel
   * names a device's file by a path that ends in the file's own name, so each device has one
   * candidate per directory.
   */
  @Override
  public Map<LoopDevice, Path> attachedIn(Pool pool) {
    Map<LoopDevice, Path> held = new LinkedHashMap<>();
    for (LoopDevice loop : loops.list()) {
      Path name = loop.backingFile().getFileName();
      if (name == null) {
        continue;
      }
      for (Path dir : List.of(pool.imagesDir(), pool.snapshotsDir())) {
        Path file = dir.resolve(name);
        if (!loops.backedBy(List.of(loop), file, true).isEmpty()) {
          held.put(loop, file);
        }
      }
    }
    return held;
  }
}
