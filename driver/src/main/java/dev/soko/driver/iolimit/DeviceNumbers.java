package dev.soko.driver.iolimit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/** A block device's number as the block IO controller names it ("major:minor"), from sysfs. */
public final class DeviceNumbers {
  private static final Path SYS_BLOCK = Path.of("/sys/class/block");

  private DeviceNumbers() {}

  /** The number of {@code device} (e.g. {@code /dev/loop3}); empty when sysfs does not know it. */
  public static Optional<String> of(String device) {
    Path name = Path.of(device).getFileName();
    if (name == null) {
      return Optional.empty();
    }
    try {
      String number = Files.readString(SYS_BLOCK.resolve(name.toString()).resolve("dev")).strip();
      return number.matches("[0-9]+:[0-9]+") ? Optional.of(number) : Optional.empty();
    } catch (IOException e) {
      return Optional.empty();
    }
  }
}
