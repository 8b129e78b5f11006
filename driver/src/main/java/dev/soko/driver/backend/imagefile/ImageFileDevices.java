package dev.soko.driver.backend.imagefile;

import dev.soko.driver.backend.AttachedDevice;
import dev.soko.driver.backend.BlockDevices;
import dev.soko.driver.mount.LoopDevice;
import dev.soko.driver.mount.LoopDevices;
import dev.soko.driver.pool.Pool;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The loop devices that image files are attached through. */
final class ImageFileDevices implements BlockDevices {
  private final LoopDevices loops;

  ImageFileDevices(LoopDevices loops) {
    this.loops = loops;
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
  public List<AttachedDevice> inventory() {
    return loops.list().stream().map(ImageFileDevices::attached).toList();
  }

  @Override
  public List<String> backedBy(List<AttachedDevice> inventory, Path location, boolean deletedToo) {
    List<LoopDevice> listed =
        inventory.stream()
            .map(d -> new LoopDevice(d.device(), d.backing(), d.backingDeleted()))
            .toList();
    return loops.backedBy(listed, location, deletedToo);
  }

  private static AttachedDevice attached(LoopDevice loop) {
    return new AttachedDevice(loop.device(), loop.backingFile(), loop.backingFileDeleted());
  }

  /**
   * The loop devices backed by a file in the pool's image directories, with that file. The kernel
   * names a device's file by a path that ends in the file's own name, so each device has one
   * candidate per directory.
   */
  @Override
  public Map<AttachedDevice, Path> attachedIn(Pool pool) {
    Map<AttachedDevice, Path> held = new LinkedHashMap<>();
    for (LoopDevice loop : loops.list()) {
      Path name = loop.backingFile().getFileName();
      if (name == null) {
        continue;
      }
      for (Path dir : List.of(pool.volumesDir(), pool.snapshotsDir())) {
        Path file = dir.resolve(name);
        if (!loops.backedBy(List.of(loop), file, true).isEmpty()) {
          held.put(attached(loop), file);
        }
      }
    }
    return held;
  }
}
