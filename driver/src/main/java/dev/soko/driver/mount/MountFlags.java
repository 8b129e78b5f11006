package dev.soko.driver.mount;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Turns allow-listed mount flags ({@link MountOptions#FLAGS}) into what mount(2) takes: the generic
 * ones become {@code MS_*} bits, the rest (filesystem options such as {@code discard}) go into the
 * data string, as mount(8) would pass them.
 *
 * @param bits the {@code MS_*} flags
 * @param data comma-joined filesystem options, or null when there are none
 */
public record MountFlags(long bits, String data) {
  public static final long MS_RDONLY = 1;
  public static final long MS_NOSUID = 2;
  public static final long MS_NODEV = 4;
  public static final long MS_NOEXEC = 8;
  public static final long MS_SYNCHRONOUS = 16;
  public static final long MS_REMOUNT = 32;
  public static final long MS_DIRSYNC = 128;
  public static final long MS_NOATIME = 1024;
  public static final long MS_NODIRATIME = 2048;
  public static final long MS_BIND = 4096;
  public static final long MS_RELATIME = 1L << 21;
  public static final long MS_STRICTATIME = 1L << 24;
  public static final long MS_LAZYTIME = 1L << 25;

  private static final Map<String, Long> BITS =
      Map.ofEntries(
          Map.entry("ro", MS_RDONLY),
          Map.entry("nosuid", MS_NOSUID),
          Map.entry("nodev", MS_NODEV),
          Map.entry("noexec", MS_NOEXEC),
          Map.entry("sync", MS_SYNCHRONOUS),
          Map.entry("dirsync", MS_DIRSYNC),
          Map.entry("noatime", MS_NOATIME),
          Map.entry("nodiratime", MS_NODIRATIME),
          Map.entry("relatime", MS_RELATIME),
          Map.entry("strictatime", MS_STRICTATIME),
          Map.entry("lazytime", MS_LAZYTIME));

  /** Options that only the filesystem understands; they travel in the data string. */
  private static final List<String> DATA = List.of("discard", "nodiscard");

  /**
   * Maps request flags, checked against the allow-list first. {@code rw} clears a preceding {@code
   * ro} (the later flag wins, as with mount(8)).
   *
   * @param extraData filesystem options the driver itself adds (e.g. xfs {@code nouuid})
   */
  public static MountFlags of(List<String> flags, List<String> extraData) {
    long bits = 0;
    List<String> data = new ArrayList<>();
    for (String flag : MountOptions.checkFlags(flags)) {
      if ("rw".equals(flag)) {
        bits &= ~MS_RDONLY;
      } else if (BITS.containsKey(flag)) {
        bits |= BITS.get(flag);
      } else if (DATA.contains(flag)) {
        data.add(flag);
      } else {
        // MountOptions.FLAGS and this mapping must list the same flags; a new allowed flag
        // without a mapping would otherwise be dropped without a word.
        throw new IllegalStateException("allowed mount flag " + flag + " has no mapping");
      }
    }
    data.addAll(extraData);
    return new MountFlags(bits, data.isEmpty() ? null : String.join(",", data));
  }

  public static MountFlags of(List<String> flags) {
    return of(flags, List.of());
  }

  private static final long ATIME_BITS = MS_NOATIME | MS_RELATIME | MS_STRICTATIME;

  /** Per-mount options as mountinfo shows them, and their bits. */
  private static final List<String> PER_MOUNT =
      List.of("ro", "nosuid", "nodev", "noexec", "noatime", "nodiratime", "relatime");

  /** Allow-listed flags the kernel shows among a filesystem's own options, not the mount's. */
  private static final List<String> SUPER = List.of("sync", "dirsync", "lazytime", "discard");

  /**
   * Allow-listed flags that mount a filesystem again the way {@code mount} has it, for a mount
   * whose request flags were never recorded. The kernel shows no atime option for {@code
   * strictatime} and {@code relatime} for its default; options it does not show ({@code nodiscard},
   * {@code rw}) are the defaults anyway.
   */
  public static List<String> flagsOf(MountEntry mount) {
    List<String> flags = new ArrayList<>();
    for (String option : mount.options()) {
      if (PER_MOUNT.contains(option) && !"relatime".equals(option)) {
        flags.add(option);
      }
    }
    if (!mount.options().contains("noatime") && !mount.options().contains("relatime")) {
      flags.add("strictatime");
    }
    for (String option : mount.superOptions()) {
      if (SUPER.contains(option)) {
        flags.add(option);
      }
    }
    return List.copyOf(flags);
  }

  /**
   * The per-mount bits for a bind remount: the mount's current ones ({@code current}, as
   * /proc/self/mountinfo lists them) with the requested flags applied on top, so a bind that
   * inherited {@code nosuid,nodev} from its staging mount keeps them when it is made read-only.
   * This is what mount(8) does for {@code -o remount,bind,ro}; a bare bind remount would instead
   * reset every flag it is not given.
   */
  public static long forBindRemount(List<String> current, List<String> requested) {
    MountFlags asked = of(requested);
    long bits = 0;
    for (String option : current) {
      if (PER_MOUNT.contains(option)) {
        bits |= BITS.get(option);
      }
    }
    if ((asked.bits & ATIME_BITS) != 0) {
      bits &= ~ATIME_BITS; // an asked-for atime mode replaces the current one
    }
    if (MountOptions.checkFlags(requested).contains("rw")) {
      bits &= ~MS_RDONLY;
    }
    return bits | asked.bits;
  }
}
