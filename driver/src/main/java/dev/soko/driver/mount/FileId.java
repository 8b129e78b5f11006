package dev.soko.driver.mount;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

/**
 * Which file a file is, whatever path names it: its filesystem's device number and its inode number
 * ({@code st_dev}, {@code st_ino}), as stat(2) gives them and as the loop driver keeps them for a
 * device's backing file ({@code lo_device}, {@code lo_inode}).
 */
public record FileId(long device, long inode) {

  /** The file's identity; empty when there is no such file. One stat(2). */
  public static Optional<FileId> of(Path file) {
    try {
      Map<String, Object> attributes = Files.readAttributes(file, "unix:dev,ino");
      return Optional.of(new FileId((Long) attributes.get("dev"), (Long) attributes.get("ino")));
    } catch (NoSuchFileException gone) {
      return Optional.empty();
    } catch (IOException e) {
      throw MountException.failed("cannot stat " + file + ": " + e.getMessage(), e);
    }
  }
}
