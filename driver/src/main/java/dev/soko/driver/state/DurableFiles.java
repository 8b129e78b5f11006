package dev.soko.driver.state;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** The two file operations every durable write here is built from. */
public final class DurableFiles {
  private DurableFiles() {}

  /** Opens {@code file} for writing from empty, creating it if needed. */
  public static FileChannel rewrite(Path file) throws IOException {
    return FileChannel.open(
        file,
        StandardOpenOption.CREATE,
        StandardOpenOption.TRUNCATE_EXISTING,
        StandardOpenOption.WRITE);
  }

  /** Makes the entries of {@code dir} (a create, rename or delete in it) durable. */
  public static void syncDirectory(Path dir) {
    try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
      channel.force(true);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot fsync " + dir, e);
    }
  }
}
