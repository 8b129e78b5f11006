package dev.soko.driver.mount;

import dev.soko.driver.exec.Exec;
import dev.soko.driver.exec.ExecResult;
import dev.soko.driver.volume.StorageException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The real {@link LoopDevices}, on util-linux's losetup. */
public final class Losetup implements LoopDevices {
  private static final Pattern NAME =
      Pattern.compile("\"name\"\\s*:\\s*\"((?:[^\"\\\\]|\\\\.)*)\"");
  private static final Pattern BACK_FILE =
      Pattern.compile("\"back-file\"\\s*:\\s*\"((?:[^\"\\\\]|\\\\.)*)\"");
  private static final String DELETED = " (deleted)";

  private static final java.time.Duration DETACH_WAIT = java.time.Duration.ofSeconds(5);

  private final Exec exec;
  private final Path sysfs;

  public Losetup(Exec exec) {
    this(exec, Path.of("/sys/block"));
  }

  Losetup(Exec exec, Path sysfs) {
    this.exec = exec;
    this.sysfs = sysfs;
  }

  @Override
  public String attach(Path image) {
    // No --direct-io: with it the kernel may raise the device's logical block size to the backing
    // filesystem's, and a filesystem made with smaller blocks then no longer mounts.
    ExecResult result =
        exec.check(List.of("losetup", "--find", "--show", "--", image.toString()), Exec.SHORT);
    String device = result.stdout().strip();
    if (!device.startsWith("/dev/loop")) {
      throw new StorageException(
          StorageException.Reason.INTERNAL, "losetup printed no device: " + result.stdout());
    }
    return device;
  }

  @Override
  public List<LoopDevice> list() {
    ExecResult result = exec.check(List.of("losetup", "--list", "--json"), Exec.SHORT);
    return parse(result.stdout());
  }

  /**
   * Parses {@code losetup --list --json}: one object per device, each with a name and back-file.
   */
  static List<LoopDevice> parse(String json) {
    List<LoopDevice> devices = new ArrayList<>();
    for (String object : json.split("}")) {
      Matcher name = NAME.matcher(object);
      Matcher file = BACK_FILE.matcher(object);
      if (name.find() && file.find()) {
        String backing = unescape(file.group(1));
        boolean deleted = backing.endsWith(DELETED);
        if (deleted) {
          backing = backing.substring(0, backing.length() - DELETED.length());
        }
        devices.add(new LoopDevice(unescape(name.group(1)), Path.of(backing), deleted));
      }
    }
    return devices;
  }

  private static String unescape(String value) {
    return value.replace("\\\"", "\"").replace("\\\\", "\\");
  }

  @Override
  public void refreshSize(String device) {
    exec.check(List.of("losetup", "--set-capacity", checkDevice(device)), Exec.SHORT);
  }

  @Override
  public void detach(String device) {
    exec.check(List.of("losetup", "--detach", checkDevice(device)), Exec.SHORT);
    awaitDetached(device);
  }

  /**
   * A device someone still holds open (udev probing it, say) is only marked to clear on last close,
   * so losetup returns before it is free. Waiting keeps a quick re-stage from picking up a device
   * that is about to vanish.
   */
  private void awaitDetached(String device) {
    Path backing =
        sysfs.resolve(Path.of(device).getFileName().toString()).resolve("loop/backing_file");
    long deadline = System.nanoTime() + DETACH_WAIT.toNanos();
    while (java.nio.file.Files.exists(backing) && System.nanoTime() < deadline) {
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  private static String checkDevice(String device) {
    if (!device.matches("/dev/loop[0-9]+")) {
      throw new IllegalArgumentException("not a loop device: " + device);
    }
    return device;
  }
}
