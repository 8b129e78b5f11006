package dev.soko.driver.testing;

import dev.soko.driver.exec.Exec;
import dev.soko.driver.exec.ProcessExec;
import java.nio.file.Path;
import java.util.List;

/**
 * What the btrfs and e2fsprogs tools say of a subvolume, for tests: read with the tools and not
 * with the driver's own ioctls, so that a check does not share the driver's mistakes.
 */
public final class BtrfsTools {
  private static final Exec EXEC = new ProcessExec();

  private BtrfsTools() {}

  /** Whether lsattr shows the C attribute (FS_NOCOW_FL) on the directory itself. */
  public static boolean noCopyOnWrite(Path dir) {
    String out = EXEC.check(List.of("lsattr", "-d", dir.toString()), Exec.SHORT).stdout();
    return out.strip().split("\\s+")[0].contains("C");
  }

  /**
   * The subvolume's qgroup limit on referenced bytes as {@code btrfs qgroup show} prints it: a
   * number of bytes, or {@code none}.
   */
  public static String limitOf(Path subvolume) {
    String id =
        EXEC.check(List.of("btrfs", "inspect-internal", "rootid", subvolume.toString()), Exec.SHORT)
            .stdout()
            .strip();
    String table =
        EXEC.check(
                List.of("btrfs", "qgroup", "show", "-r", "--raw", "-f", subvolume.toString()),
                Exec.SHORT)
            .stdout();
    for (String line : table.split("\n")) {
      String[] columns = line.strip().split("\\s+");
      if (columns.length >= 4 && columns[0].equals("0/" + id)) {
        return columns[3];
      }
    }
    throw new AssertionError("no qgroup 0/" + id + " for " + subvolume + " in:\n" + table);
  }
}
