package dev.soko.driver.pool;

import dev.soko.driver.state.DurableFiles;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * The number of a pool's on-disk format (its directory layout, record fields and journal), kept in
 * {@code .soko/format}. A driver opens the formats up to {@link #CURRENT} and refuses a newer one
 * before it reads or changes anything: a downgrade below the release that wrote it would otherwise
 * recover from records it does not understand. Whoever changes the format raises {@link #CURRENT},
 * migrates the older formats in {@link #checkOrStamp} and tests the migration from a pool the
 * previous release wrote.
 *
 * <p>Format 1 is the layout of release 0.1.0, which wrote no format file: a pool without one is
 * format 1. It includes what 0.2.0 added (IO limits and group membership in the records, the group
 * store), which 0.2.0 reads and 0.1.0 passes over; 0.1.0 reads no format file at all, so no format
 * number makes it refuse a pool. {@code PoolFormatContentsTest} lists what the format holds.
 */
final class PoolFormat {
  static final int CURRENT = 1;

  private static final String FILE = "format";

  private PoolFormat() {}

  /**
   * Reads the format of the pool whose metadata directory is {@code sokoDir}, stamps a pool that
   * has none, and refuses one this driver cannot read.
   *
   * @throws PoolException UNUSABLE for a newer format or an unreadable format file, which is left
   *     as it is
   * @throws IOException when the stamp cannot be written
   */
  static void checkOrStamp(String pool, Path sokoDir) throws IOException {
    Path file = sokoDir.resolve(FILE);
    int format = read(pool, file);
    if (format > CURRENT) {
      throw PoolException.of(
          PoolException.Kind.UNUSABLE,
          "pool %s is in on-disk format %d, written by a newer Soko; this driver reads formats up"
              + " to %d. The downgrade is refused and the pool left untouched: run the release that"
              + " wrote it, or a newer one",
          pool,
          format,
          CURRENT);
    }
    if (format == 0) {
      stamp(file);
    }
  }

  /** The format in {@code file}, or 0 when there is none. */
  private static int read(String pool, Path file) throws IOException {
    String text;
    try {
      text = Files.readString(file, StandardCharsets.US_ASCII).trim();
    } catch (NoSuchFileException e) {
      return 0;
    } catch (java.nio.charset.MalformedInputException e) {
      throw unreadable(pool, file);
    }
    if (!text.matches("[1-9][0-9]{0,8}")) {
      throw unreadable(pool, file);
    }
    return Integer.parseInt(text);
  }

  private static PoolException unreadable(String pool, Path file) {
    return PoolException.of(
        PoolException.Kind.UNUSABLE,
        "pool %s: %s does not hold a format number; the pool is not opened until it does",
        pool,
        file);
  }

  /**
   * Writes {@link #CURRENT} with the atomic protocol: temp file, fsync, rename, directory fsync.
   */
  private static void stamp(Path file) throws IOException {
    Path temp = file.resolveSibling("." + FILE + ".tmp");
    try (FileChannel channel = DurableFiles.rewrite(temp)) {
      channel.write(ByteBuffer.wrap((CURRENT + "\n").getBytes(StandardCharsets.US_ASCII)));
      channel.force(true);
    }
    Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE);
    DurableFiles.syncDirectory(file.getParent());
  }
}
