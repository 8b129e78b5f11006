package dev.soko.driver.pool;

import dev.soko.driver.exec.Exec;
import dev.soko.driver.exec.ExecResult;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Creates, copies and grows sparse image files. Copies are reflinks (instant, shared until written)
 * when the pool's filesystem supports them, and sparse copies (holes preserved) otherwise.
 */
public final class ImageFiles {
  private final Exec exec;
  private final boolean reflink;

  public ImageFiles(Exec exec, boolean reflink) {
    this.exec = exec;
    this.reflink = reflink;
  }

  public boolean reflink() {
    return reflink;
  }

  /** Tries one reflink copy of a small file in {@code dir}; whatever the outcome, cleans up. */
  public static boolean probeReflink(Exec exec, Path dir) throws IOException {
    Path source = dir.resolve("reflink-probe.src");
    Path copy = dir.resolve("reflink-probe.dst");
    try {
      Files.write(source, new byte[4096]);
      Files.deleteIfExists(copy);
      ExecResult result =
          exec.run(
              List.of("cp", "--reflink=always", source.toString(), copy.toString()), Exec.SHORT);
      return result.ok();
    } finally {
      Files.deleteIfExists(source);
      Files.deleteIfExists(copy);
    }
  }

  /**
   * Creates a new sparse file of {@code bytes}: no block is allocated until written. Not flushed:
   * the record written next is what makes the volume durable, and should a crash lose this empty
   * file, recovery makes it again (see Recovery). A copy, which holds data, is flushed.
   */
  public void createSparse(Path image, long bytes) {
    try {
      Files.createFile(image);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create image " + image, e);
    }
    try (RandomAccessFile file = new RandomAccessFile(image.toFile(), "rw")) {
      file.setLength(bytes);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create image " + image, e);
    }
  }

  /** Copies {@code source} to the new file {@code target} (reflink or sparse) and syncs it. */
  public void copy(Path source, Path target) {
    copy(source, target, reflink);
  }

  /** A sparse copy, for copies between pools (reflinks cannot cross filesystems). */
  public void sparseCopy(Path source, Path target) {
    copy(source, target, false);
  }

  private void copy(Path source, Path target, boolean useReflink) {
    if (!Files.isRegularFile(source)) {
      throw PoolException.of(PoolException.Kind.STORAGE_MISSING, "the source image is missing");
    }
    String mode = useReflink ? "--reflink=always" : "--sparse=always";
    exec.check(List.of("cp", mode, source.toString(), target.toString()), Exec.LONG);
    Pool.fsync(target);
  }

  /** Grows an image to {@code bytes}; a no-op if it is already that large. Never shrinks. */
  public void grow(Path image, long bytes) {
    if (!Files.isRegularFile(image)) {
      throw PoolException.of(PoolException.Kind.STORAGE_MISSING, "the volume's image is missing");
    }
    try (RandomAccessFile file = new RandomAccessFile(image.toFile(), "rw")) {
      if (file.length() < bytes) {
        file.setLength(bytes);
        file.getFD().sync();
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot grow image " + image, e);
    }
  }

  /**
   * The bytes the pool filesystem has allocated to the files below {@code dirs} (st_blocks, as du
   * counts them: an extent a reflink shares is counted in each file holding it). Holes punched by a
   * volume's discard show here as a fall, where the images' apparent sizes stay put.
   */
  public long allocatedBytes(List<Path> dirs) {
    List<String> command = new java.util.ArrayList<>(List.of("du", "-s", "-B1", "-c", "--"));
    dirs.forEach(d -> command.add(d.toString()));
    String out = exec.check(command, Exec.LONG).stdout().strip();
    String total = out.substring(out.lastIndexOf('\n') + 1).split("\\s+")[0];
    return Long.parseLong(total);
  }

  public long size(Path image) {
    try {
      return Files.size(image);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot stat image " + image, e);
    }
  }
}
