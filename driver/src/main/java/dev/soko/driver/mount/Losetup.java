package dev.soko.driver.mount;

import dev.soko.driver.exec.Exec;
import dev.soko.driver.exec.ExecResult;
import dev.soko.driver.volume.StorageException;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/** The real {@link LoopDevices}, on util-linux's losetup. */
public final class Losetup implements LoopDevices {
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

  /**
   * Reads the kernel's own table in sysfs ({@code /sys/block/loopN/loop/backing_file}) rather than
   * running {@code losetup --list}: every delete and stage asks this, and a file read costs
   * microseconds where spawning a process costs milliseconds.
   */
  @Override
  public List<LoopDevice> list() {
    List<LoopDevice> devices = new ArrayList<>();
    try (DirectoryStream<Path> blocks = Files.newDirectoryStream(sysfs, "loop*")) {
      for (Path block : blocks) {
        readBacking(block.resolve("loop/backing_file"))
            .map(backing -> device("/dev/" + block.getFileName(), backing))
            .ifPresent(devices::add);
      }
    } catch (NoSuchFileException noLoopDevicesYet) {
      return List.of();
    } catch (IOException e) {
      throw StorageException.internal("cannot list loop devices in " + sysfs, e);
    }
    devices.sort(Comparator.comparing(LoopDevice::device));
    return devices;
  }

  /** The backing file of an attached device; empty when the device is free (no such file). */
  private static Optional<String> readBacking(Path file) throws IOException {
    try {
      String value = Files.readString(file);
      return Optional.of(value.endsWith("\n") ? value.substring(0, value.length() - 1) : value);
    } catch (NoSuchFileException free) {
      return Optional.empty();
    }
  }

  private static LoopDevice device(String name, String backing) {
    boolean deleted = backing.endsWith(DELETED);
    String path = deleted ? backing.substring(0, backing.length() - DELETED.length()) : backing;
    return new LoopDevice(name, Path.of(path), deleted);
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
