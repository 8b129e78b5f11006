package dev.soko.driver.mount;

import dev.soko.driver.config.PoolConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The allow-lists for filesystem types and mount flags. Only flags that change how one mount
 * behaves are accepted: nothing that names another path or device (so no {@code context=}, {@code
 * loop=}, {@code journal_path=}), nothing that changes ownership ({@code uid=}), and nothing that
 * trades integrity for speed ({@code nobarrier}, {@code data=writeback}, {@code norecovery}). A
 * request's flags are checked here; anything else is INVALID_ARGUMENT.
 */
public final class MountOptions {
  /** The filesystems the driver makes and grows, from the backend table. */
  public static final Set<String> FS_TYPES = PoolConfig.Backend.formattedFsTypes();

  public static final Set<String> FLAGS =
      Set.of(
          "ro",
          "rw",
          "noatime",
          "nodiratime",
          "relatime",
          "strictatime",
          "lazytime",
          "nodev",
          "nosuid",
          "noexec",
          "sync",
          "dirsync",
          "discard",
          "nodiscard");

  private MountOptions() {}

  public static String checkFsType(String fsType) {
    if (!FS_TYPES.contains(fsType)) {
      throw MountException.refused(
          "filesystem type %s is not supported (allowed: %s)",
          printable(fsType), String.join(", ", FS_TYPES));
    }
    return fsType;
  }

  /**
   * Splits comma-joined entries (kubelet passes both forms) and checks every flag.
   *
   * @return the individual flags, in order, without duplicates
   */
  public static List<String> checkFlags(List<String> flags) {
    List<String> checked = new ArrayList<>();
    for (String entry : flags) {
      for (String flag : entry.split(",", -1)) {
        String trimmed = flag.trim();
        if (!FLAGS.contains(trimmed)) {
          throw MountException.refused(
              "mount flag %s is not allowed (allowed: %s)",
              printable(trimmed), String.join(", ", FLAGS.stream().sorted().toList()));
        }
        if (!checked.contains(trimmed)) {
          checked.add(trimmed);
        }
      }
    }
    return checked;
  }

  /** Quotes a request string for an error message, cut short and without control characters. */
  static String printable(String value) {
    String shown = value.length() > 64 ? value.substring(0, 64) + "..." : value;
    return "\"" + shown.replaceAll("\\p{Cntrl}", "?") + "\"";
  }
}
