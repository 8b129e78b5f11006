package dev.soko.driver.backend;

import dev.soko.driver.pool.Pool;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The node side of a backend whose volumes are attached as block devices: the volume layer attaches
 * the storage, puts a filesystem on the device (unless it is a block volume) and mounts it, and
 * finds the volume's mounts by device.
 */
public non-sealed interface BlockDevices extends NodeSide {

  /** Attaches the storage as a block device and returns the device's path. */
  String attach(Path location, int directIoBlockSize);

  void detach(String device);

  /** Makes an attached device pick up its storage's new size after a grow. */
  void refreshSize(String device);

  /** The devices attached to the volume's storage (normally zero or one). */
  List<String> devices(Path location);

  /**
   * Like {@link #devices}, and also the devices still holding it when it was deleted under them.
   */
  List<String> devicesHolding(Path location);

  /**
   * The inventory for recovery and health: every device attached on the host with the storage the
   * kernel says backs it. Cheap; read once and matched with {@link #backedBy} many times.
   */
  List<AttachedDevice> inventory();

  /** The devices attached to storage in {@code pool}, each with that storage's location. */
  Map<AttachedDevice, Path> attachedIn(Pool pool);

  /** Of an {@link #inventory}, the devices backed by {@code location} (see {@link #devices}). */
  List<String> backedBy(List<AttachedDevice> inventory, Path location, boolean deletedToo);
}
