package dev.soko.driver.mount;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** In-memory loop devices for unit tests: attach hands out /dev/loopN, nothing touches the host. */
public final class FakeLoopDevices implements LoopDevices {
  private final Map<String, Path> attached = new TreeMap<>();
  private final List<String> refreshed = new ArrayList<>();
  private int next;

  @Override
  public synchronized String attach(Path image) {
    String device = "/dev/loop" + next++;
    attached.put(device, image);
    return device;
  }

  @Override
  public synchronized List<LoopDevice> list() {
    List<LoopDevice> devices = new ArrayList<>();
    attached.forEach(
        (device, image) -> devices.add(new LoopDevice(device, image, !image.toFile().exists())));
    return devices;
  }

  @Override
  public synchronized void refreshSize(String device) {
    refreshed.add(device);
  }

  @Override
  public synchronized void detach(String device) {
    if (attached.remove(device) == null) {
      throw new IllegalStateException(device + " is not attached");
    }
  }

  public synchronized Map<String, Path> attached() {
    return new TreeMap<>(attached);
  }

  public synchronized List<String> refreshed() {
    return new ArrayList<>(refreshed);
  }
}
