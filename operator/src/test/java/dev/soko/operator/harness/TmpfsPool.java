package dev.soko.operator.harness;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A pool directory with a filesystem of its own, as on a real node: the driver refuses a pool on
 * the filesystem of the kubelet's directory. Closing it detaches the loop devices the driver left
 * on the pool's images (a failed run leaves some) and unmounts everything under it.
 */
public final class TmpfsPool implements AutoCloseable {
  private final Path dir;

  private TmpfsPool(Path dir) {
    this.dir = dir;
  }

  /** Mounts a tmpfs of {@code size} (e.g. "4g") on {@code dir}, which it creates. */
  public static TmpfsPool mount(Path dir, String size) throws IOException, InterruptedException {
    Files.createDirectories(dir);
    run("mount", "-t", "tmpfs", "-o", "size=" + size + ",mode=0755", "soko-pool", dir.toString());
    return new TmpfsPool(dir);
  }

  public Path dir() {
    return dir;
  }

  @Override
  public void close() throws IOException, InterruptedException {
    String prefix = dir + "/";
    for (String line : output("losetup", "-l", "-n", "-O", "NAME,BACK-FILE")) {
      String[] fields = line.trim().split("\\s+", 2);
      if (fields.length == 2 && fields[1].startsWith(prefix)) {
        run("losetup", "-d", fields[0]);
      }
    }
    List<String> mounts =
        output("findmnt", "-rn", "-o", "TARGET").stream()
            .filter(m -> m.equals(dir.toString()) || m.startsWith(prefix))
            .sorted(Comparator.reverseOrder())
            .toList();
    for (String mount : mounts) {
      run("umount", "-l", mount);
    }
  }

  private static void run(String... cmd) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new IOException(String.join(" ", cmd) + " failed: " + out);
    }
  }

  private static List<String> output(String... cmd) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    p.waitFor(30, TimeUnit.SECONDS);
    return out.lines().toList();
  }
}
