package dev.soko.driver.mount;

import java.nio.file.Path;
import java.util.List;

/** Loop devices: how image files become block devices. */
public interface LoopDevices {

  /** Attaches a new loop device to {@code image}; returns its path, e.g. {@code /dev/loop3}. */
  String attach(Path image);

  /** Every attached loop device on the host. */
  List<LoopDevice> list();

  /** The loop devices attached to {@code image} (normally zero or one). */
  default List<String> devicesFor(Path image) {
    return list().stream()
        .filter(l -> !l.backingFileDeleted() && l.backingFile().equals(image))
        .map(LoopDevice::device)
        .toList();
  }

  /**
   * Like {@link #devicesFor}, and also the devices still holding {@code image} after it was deleted
   * under them: their mounts are still the image's.
   */
  default List<String> devicesHolding(Path image) {
    return list().stream()
        .filter(l -> l.backingFile().equals(image))
        .map(LoopDevice::device)
        .toList();
  }

  /** Makes the device pick up its backing file's new size. */
  void refreshSize(String device);

  void detach(String device);
}
