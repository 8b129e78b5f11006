package dev.soko.driver.e2e;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What the host holds for a directory tree: loop devices whose image lies under it and mounts below
 * it. Tests use it to prove nothing leaked and to clean up after themselves.
 */
final class HostState {
  private HostState() {}

  /** Loop devices ("/dev/loopN") backed by a file under {@code dir}. */
  static List<String> loopDevicesUnder(Path dir) throws IOException, InterruptedException {
    List<String> devices = new ArrayList<>();
    for (String line : run("losetup", "--list", "--noheadings", "--output", "NAME,BACK-FILE")) {
      String[] fields = line.trim().split("\\s+", 2);
      if (fields.length == 2 && fields[1].startsWith(dir.toString() + "/")) {
        devices.add(fields[0]);
      }
    }
    return devices;
  }

  /**
   * Loop devices backed by {@code file}, found by its device and inode numbers as losetup(8) shows
   * them, whatever path the kernel names the file by: one attached through a mount that is gone is
   * named relative to that mount. Empty when the file does not exist.
   */
  static List<String> loopDevicesHolding(Path file) throws IOException, InterruptedException {
    if (!Files.exists(file)) {
      return List.of();
    }
    long dev = (Long) Files.getAttribute(file, "unix:dev");
    long ino = (Long) Files.getAttribute(file, "unix:ino");
    // glibc's major() and minor() of st_dev
    long major = ((dev >>> 8) & 0xfff) | ((dev >>> 32) & 0xfffff000L);
    long minor = (dev & 0xff) | ((dev >>> 12) & 0xffffff00L);
    List<String> devices = new ArrayList<>();
    for (String line :
        run("losetup", "--list", "--noheadings", "-O", "NAME,BACK-MAJ:MIN,BACK-INO")) {
      String[] fields = line.trim().split("\\s+");
      if (fields.length == 3
          && fields[1].equals(major + ":" + minor)
          && fields[2].equals(String.valueOf(ino))) {
        devices.add(fields[0]);
      }
    }
    return devices;
  }

  /** Mount points at or below {@code dir}, deepest first. */
  static List<String> mountsUnder(Path dir) throws IOException {
    List<String> mounts = new ArrayList<>();
    for (String line : Files.readAllLines(Path.of("/proc/self/mountinfo"))) {
      String mountPoint = line.split(" ")[4].replace("\\040", " ");
      if (mountPoint.equals(dir.toString()) || mountPoint.startsWith(dir + "/")) {
        mounts.add(mountPoint);
      }
    }
    mounts.sort(Comparator.comparingInt(String::length).reversed());
    return mounts;
  }

  /** Unmounts and detaches whatever a failed test left under {@code dir}, then deletes it. */
  static void release(Path dir) throws IOException, InterruptedException {
    // Stacked mounts, and mounts inside mounts, may need more than one pass.
    for (int pass = 0; pass < 5; pass++) {
      List<String> mounts = mountsUnder(dir);
      if (mounts.isEmpty()) {
        break;
      }
      for (String mount : mounts) {
        List<String> out = run("umount", "-l", mount);
        if (pass > 0) {
          System.err.println("release: pass " + pass + ", umount " + mount + ": " + out);
        }
      }
    }
    for (String device : loopDevicesUnder(dir)) {
      run("losetup", "-d", device);
    }
    if (Files.exists(dir)) {
      try (var paths = Files.walk(dir)) {
        paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  /** Runs a command and fails unless it succeeds. */
  static void check(String... command) throws IOException, InterruptedException {
    Process process = start(command);
    List<String> out = output(process, command);
    if (process.exitValue() != 0) {
      throw new IOException(String.join(" ", command) + " failed: " + String.join("\n", out));
    }
  }

  private static List<String> run(String... command) throws IOException, InterruptedException {
    return output(start(command), command);
  }

  private static Process start(String... command) throws IOException {
    return new ProcessBuilder(command).redirectErrorStream(true).start();
  }

  private static List<String> output(Process process, String... command)
      throws IOException, InterruptedException {
    byte[] out = process.getInputStream().readAllBytes();
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new IOException(String.join(" ", command) + " timed out");
    }
    return List.of(new String(out, StandardCharsets.UTF_8).split("\n"));
  }
}
