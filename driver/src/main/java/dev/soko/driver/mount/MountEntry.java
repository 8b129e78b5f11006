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
 * @param superOptions the filesystem's own options, shared by every mount of it (e.g. {@code
 *     discard}, {@code lazytime})
 */
public record MountEntry(
    int id,
    int parentId,
    String device,
    String root,
    Path mountPoint,
    List<String> options,
    String fsType,
    String source,
    List<String> superOptions) {

  public boolean readOnly() {
    return options.contains("ro");
  }
}
