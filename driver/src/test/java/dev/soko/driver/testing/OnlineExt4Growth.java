package dev.soko.driver.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Whether this host lets the tests grow a mounted ext4: the kernel refuses EXT4_IOC_RESIZE_FS
 * without CAP_SYS_RESOURCE, which root lacks in some sandboxes and hardened nodes (and on the
 * machine the project is built on). A test of the online growth reports itself skipped without it,
 * and a test of the refusal skipped with it: neither passes under the other's name.
 */
public final class OnlineExt4Growth {
  /** The reason an online ext4 growth test is skipped here. */
  public static final String WITHHELD =
      "growing a mounted ext4 needs CAP_SYS_RESOURCE, which root lacks on this host";

  /** The reason a test of the refusal is skipped here. */
  public static final String PERMITTED =
      "root holds CAP_SYS_RESOURCE on this host, so the kernel grows a mounted ext4 and the"
          + " refusal cannot happen";

  private OnlineExt4Growth() {}

  /** CAP_SYS_RESOURCE (capability 24) in this process's effective set. */
  public static boolean permitted() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
        if (line.startsWith("CapEff:")) {
          return (Long.parseLong(line.substring(7).strip(), 16) & (1L << 24)) != 0;
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return false;
  }
}
