package dev.soko.driver.state;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * One directory of small JSON records, one file per ID. Every write is atomic and durable: the new
 * content goes to a temp file that is fsynced, renamed over the record, and the directory is
 * fsynced, so after a crash a record is either the old or the new version, never a torn one. A
 * leftover temp file is the only trace of an interrupted write; {@link #removeTempFiles} clears it.
 */
public final class RecordStore {
  private static final String SUFFIX = ".json";
  private static final String TEMP_SUFFIX = ".tmp";

  private final Path dir;
  private final Predicate<String> validId;

  public RecordStore(Path dir, Predicate<String> validId) {
    this.dir = dir;
    this.validId = validId;
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create state directory " + dir, e);
    }
  }

  public Path dir() {
    return dir;
  }

  public void write(String id, Map<String, String> fields) {
    Path target = file(id);
    Path temp = dir.resolve("." + id + SUFFIX + TEMP_SUFFIX);
    byte[] bytes = FlatJson.write(fields).getBytes(StandardCharsets.UTF_8);
    try {
      try (FileChannel channel =
          FileChannel.open(
              temp,
              StandardOpenOption.CREATE,
              StandardOpenOption.TRUNCATE_EXISTING,
              StandardOpenOption.WRITE)) {
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        while (buffer.hasRemaining()) {
          channel.write(buffer);
        }
        channel.force(true);
      }
      Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      syncDirectory();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write record " + target, e);
    }
  }

  /**
   * Reads a record.
   *
   * @throws IllegalArgumentException when the file exists but is not a valid record
   */
  public Optional<Map<String, String>> read(String id) {
    try {
      return Optional.of(FlatJson.parse(Files.readString(file(id), StandardCharsets.UTF_8)));
    } catch (NoSuchFileException e) {
      return Optional.empty();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read record " + file(id), e);
    }
  }

  /** IDs of all complete records, in no particular order. */
  public List<String> ids() {
    List<String> ids = new ArrayList<>();
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir, "*" + SUFFIX)) {
      for (Path entry : entries) {
        String name = entry.getFileName().toString();
        String id = name.substring(0, name.length() - SUFFIX.length());
        if (validId.test(id)) {
          ids.add(id);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list " + dir, e);
    }
    return ids;
  }

  public void delete(String id) {
    try {
      if (Files.deleteIfExists(file(id))) {
        syncDirectory();
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot delete record " + file(id), e);
    }
  }

  /** Moves an unreadable record aside (never deletes it: it may describe data) and says where. */
  public Path quarantine(String id) {
    Path aside = dir.resolve(id + SUFFIX + ".corrupt");
    try {
      Files.move(file(id), aside, StandardCopyOption.REPLACE_EXISTING);
      syncDirectory();
      return aside;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot quarantine record " + file(id), e);
    }
  }

  /** Removes temp files left by writes a crash interrupted; returns how many. */
  public int removeTempFiles() {
    int removed = 0;
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir, ".*" + TEMP_SUFFIX)) {
      for (Path entry : entries) {
        Files.deleteIfExists(entry);
        removed++;
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot clean " + dir, e);
    }
    if (removed > 0) {
      syncDirectory();
    }
    return removed;
  }

  private Path file(String id) {
    if (!validId.test(id)) {
      throw new IllegalArgumentException("not a valid record ID: " + id);
    }
    return dir.resolve(id + SUFFIX);
  }

  private void syncDirectory() {
    try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
      channel.force(true);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot fsync " + dir, e);
    }
  }
}
