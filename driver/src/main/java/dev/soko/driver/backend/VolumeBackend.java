package dev.soko.driver.backend;

import dev.soko.driver.mount.LoopDevice;
import dev.soko.driver.pool.Pool;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * How a volume's bytes are stored and handed to the node side: the seam under the engine. The
 * volume layer (provisioning, staging, expansion, recovery) decides what to do and keeps the
 * records; a backend only does it. Each pool has one backend ({@link Backends}, chosen by the
 * pool's configuration). {@link ImageFileBackend} keeps sparse image files in the pool directory
 * and attaches them as block devices (loop devices), which the volume layer formats and mounts;
 * {@link BtrfsSubvolumeBackend} keeps btrfs subvolumes, which it hands over as directories ({@link
 * #directories}) that are bind-mounted and never attached. An LVM or raw-partition backend is of
 * the first kind, a ZFS dataset one of the second. A volume's storage is named by its {@code
 * location}, the path the catalog derives from the stored record (for image files, the image).
 * Failures are the lower layers' typed exceptions; {@code volume/Failures} maps them to client
 * codes.
 *
 * <p>Discard needs no call here: a filesystem's discard (the {@code discard} mount option or
 * fstrim) travels through the device to the backend, which gives the space back (the loop device
 * punches holes in the image).
 */
public interface VolumeBackend {

  /** Creates the storage of a new, empty volume of {@code bytes} (thin: nothing written yet). */
  void create(Pool pool, Path location, long bytes);

  /**
   * Copies {@code source} to the new {@code target} in {@code targetPool}, as a snapshot, clone or
   * restore: shared until written where the pool can (reflink), a sparse copy otherwise. {@code
   * samePool} false means the copy crosses pools, where nothing can be shared.
   */
  void copy(Pool targetPool, Path source, Path target, boolean samePool);

  /**
   * Makes the snapshot {@code target} of the volume {@code source} in the same pool: a copy that
   * never changes (read-only), shared with the source where the pool can.
   */
  void snapshot(Pool pool, Path source, Path target);

  /**
   * Present when this backend's volumes are directories for the node side to bind-mount; then the
   * device methods below ({@link #attach} and the rest) have nothing to act on and are not called
   * for its volumes. Empty for a backend that attaches block devices.
   */
  Optional<DirectoryVolumes> directories();

  /** True when the volume's storage is there (a crash or an admin may have lost it). */
  boolean exists(Path location);

  /**
   * Removes the storage; nothing when it is gone already (deletes are retried). A device still
   * attached keeps the data until detached, as with any deleted file.
   */
  void delete(Path location) throws IOException;

  /**
   * Recovery's repair of a volume whose storage exists: puts back what the backend's changes leave
   * off the disk until later, and so a power cut may have undone while the volume's record (on disk
   * at once) survived; {@code bytes} is the recorded capacity. True when it repaired anything.
   */
  boolean restoreUncommitted(Pool pool, Path location, long bytes);

  /**
   * Finishes what deletes left for later, off the request path: at start-up recovery and at each
   * re-check of the pools. Returns how many leftovers it removed.
   */
  int tidy(Pool pool);

  /** Grows the storage to {@code bytes}; a no-op when it is that large. Never shrinks. */
  void grow(Pool pool, Path location, long bytes);

  /** The storage's size in bytes. */
  long size(Pool pool, Path location);

  /** Attaches the storage as a block device and returns the device's path. */
  String attach(Path location, int directIoBlockSize);

  void detach(String device);

  /** Makes an attached device pick up its storage's new size after {@link #grow}. */
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
  List<LoopDevice> inventory();

  /**
   * Recovery's inventory of a pool: every storage location the backend finds in it, whether or not
   * a record names it (an interrupted create leaves one without). Unknown entries are included;
   * {@link #idOf} tells which are Soko's.
   */
  List<Path> stored(Pool pool);

  /** The volume or snapshot ID a location was made for, empty when it is not a Soko volume's. */
  Optional<String> idOf(Path location);

  /** The devices attached to storage in {@code pool}, each with that storage's location. */
  Map<LoopDevice, Path> attachedIn(Pool pool);

  /** Of an {@link #inventory}, the devices backed by {@code location} (see {@link #devices}). */
  List<String> backedBy(List<LoopDevice> inventory, Path location, boolean deletedToo);
}
