package dev.soko.driver.backend;

import dev.soko.driver.pool.Pool;
import dev.soko.driver.pool.PoolVerdict;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * How a volume's bytes are stored: what the controller side and recovery need of a backend. A
 * volume's storage is named by its {@code location}, the path the catalog derives from the stored
 * record (for image files, the image). How the node side hands the storage to a workload is not
 * said here but by the backend's {@link NodeSide}. Failures are the lower layers' typed exceptions;
 * {@code volume/Failures} maps them to client codes.
 *
 * <p>Discard needs no call here: a filesystem's discard (the {@code discard} mount option or
 * fstrim) travels through the device to the backend, which gives the space back (the loop device
 * punches holes in the image).
 */
public interface VolumeStorage {

  /** Creates the storage of a new, empty volume of {@code bytes} (thin: nothing written yet). */
  void create(Pool pool, Path location, long bytes);

  /**
   * Copies {@code source} to the new {@code target} in {@code targetPool}, as a snapshot, clone or
   * restore: shared until written where the pool can (reflink), a sparse copy otherwise. {@code
   * samePool} false means the copy crosses pools, where nothing can be shared (only asked of a
   * backend whose {@link StorageTraits#copiesAcrossPools}).
   */
  void copy(Pool targetPool, Path source, Path target, boolean samePool);

  /**
   * Makes the snapshot {@code target} of the volume {@code source} in the same pool: a copy that
   * never changes (read-only), shared with the source where the pool can.
   */
  void snapshot(Pool pool, Path source, Path target);

  /** True when the volume's storage is there (a crash or an admin may have lost it). */
  boolean exists(Path location);

  /**
   * Removes the storage; nothing when it is gone already (deletes are retried). A device still
   * attached keeps the data until detached, as with any deleted file.
   */
  void delete(Path location) throws IOException;

  /** Grows the storage to {@code bytes}; a no-op when it is that large. Never shrinks. */
  void grow(Pool pool, Path location, long bytes);

  /** The storage's size in bytes. */
  long size(Pool pool, Path location);

  /**
   * Recovery's inventory of a pool: every storage location the backend finds in it, whether or not
   * a record names it (an interrupted create leaves one without). Unknown entries are included;
   * {@link #idOf} tells which are Soko's.
   */
  List<Path> stored(Pool pool);

  /**
   * The volume, snapshot or read copy ID a location was made for, empty when it is not a Soko
   * volume's.
   */
  Optional<String> idOf(Path location);

  /**
   * Finishes what deletes left for later, off the request path: at start-up recovery and at each
   * re-check of the pools. Returns how many leftovers it removed.
   */
  int tidy(Pool pool);

  /**
   * This backend's own check of a pool directory that passed the common ones ({@code
   * pool/PoolCheck}): what it needs of the filesystem there, refused with a reason that says how to
   * fix it; {@link PoolVerdict#READY} when it needs nothing more.
   *
   * @param directory the pool's directory as configured, for messages
   * @param resolved the same with links resolved, to look at
   */
  PoolVerdict checkPool(Path directory, Path resolved);

  /**
   * Recovery's repair of a volume whose storage exists: puts back what the backend's changes leave
   * off the disk until later, and so a power cut may have undone while the volume's record (on disk
   * at once) survived; {@code bytes} is the recorded capacity. True when it repaired anything.
   */
  boolean restoreUncommitted(Pool pool, Path location, long bytes);

  /**
   * The block metadata of the backend's storage, for changed block tracking; empty where a volume's
   * storage is not the image of a block device (a directory has no blocks to list).
   */
  Optional<BlockMaps> blockMaps();
}
