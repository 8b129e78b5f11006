package dev.soko.driver.volume;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The directories and files that staging and target paths must be before something is mounted on
 * them, made where the kubelet left them to the driver, and taken away after a failed publish.
 */
final class MountPoints {
  private static final Logger LOG = LoggerFactory.getLogger(MountPoints.class);

  private MountPoints() {}

  static void deleteQuietly(Path path) {
    try {
      Files.deleteIfExists(path);
    } catch (IOException e) {
      LOG.warn("cannot remove {} after a failed publish: {}", path, e.toString());
    }
  }

  static void createDirectory(Path path) {
    requireDirectories(path);
    try {
      Files.createDirectories(path);
    } catch (IOException e) {
      throw StorageException.internal("cannot create directory " + path, e);
    }
  }

  /** The target of a block volume: a file, on which the device is bind-mounted. */
  static void createFile(Path path) {
    requireDirectories(path.getParent());
    if (Files.isDirectory(path)) {
      throw StorageException.invalid(
          "target path %s is a directory; a block volume is published as a file", path);
    }
    try {
      Files.createDirectories(path.getParent());
      if (!Files.exists(path)) {
        Files.createFile(path);
      }
    } catch (IOException e) {
      throw StorageException.internal("cannot create file " + path, e);
    }
  }

  /**
   * Refuses a path that cannot be a directory because it, or the nearest part of it that exists, is
   * something else (a file where the CO should have given a directory): bad input, not a failure of
   * the driver.
   */
  private static void requireDirectories(Path path) {
    for (Path part = path; part != null; part = part.getParent()) {
      if (Files.exists(part)) {
        if (!Files.isDirectory(part)) {
          throw StorageException.invalid(
              "%s cannot be a directory: %s exists and is not one", path, part);
        }
        return;
      }
    }
  }
}
