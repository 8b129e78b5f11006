package dev.soko.driver.mount;

import java.nio.file.Path;
import java.util.List;

/**
 * One line of {@code /proc/self/mountinfo}.
 *
 * @param root the directory of the source filesystem that is mounted (not "/" for bind mounts of a
 *     subdirectory)
 * @param options the per-mount options (ro/rw, nodev, ...)
 * @param source the mount source, e.g. {@code /dev/loop3}
 */
public record MountEntry(
    int id,
    int parentId,
    String device,
    String root,
    Path mountPoint,
    List<String> options,
    String fsType,
    String source) {

  public boolean readOnly() {
    return options.contains("ro");
  }
}
