package dev.soko.driver.volume;

import dev.soko.driver.model.AccessType;
import dev.soko.driver.pool.Pool;
import java.nio.file.Path;
import java.util.Map;

/**
 * What a new volume's content comes from, resolved and checked ({@link VolumeOrigins}); {@code
 * bytes} is the size of its image, which a copy can never be smaller than, {@code shown} names it
 * in messages and {@code copy} writes it into the new volume's storage; {@code parameters} are the
 * StorageClass parameters its content was made with (none known for another node's).
 */
record VolumeOrigin(long bytes, String shown, Copy copy, Map<String, String> parameters) {

  /**
   * Writes an origin's content into {@code target}, a new volume's storage of {@code size} bytes in
   * {@code pool}.
   */
  @FunctionalInterface
  interface Copy {
    void into(Path target, Pool pool, long size);
  }

  /** Refuses a request for another kind of volume than the origin holds ({@code what} names it). */
  static void checkCompatible(
      AccessType haveAccess, String haveFs, AccessType wantAccess, String wantFs, String what) {
    if (haveAccess != wantAccess || !haveFs.equals(wantFs)) {
      throw StorageException.invalid(
          "the %s holds a %s volume; it cannot become a %s volume",
          what,
          haveAccess == AccessType.BLOCK ? "block" : haveFs,
          wantAccess == AccessType.BLOCK ? "block" : wantFs);
    }
  }
}
