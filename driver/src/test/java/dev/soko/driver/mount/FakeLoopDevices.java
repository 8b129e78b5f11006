package dev.soko.driver.mount;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * In-memory loop devices for unit tests: attach hands out /dev/loopN, nothing touches the host. As
 * the kernel does, a device keeps the identity of the file it was attached to, and names it
 * "(deleted)" once no file with that identity is at its path.
 */
public final class FakeLoopDevices implements LoopDevices {
  /** An attachment: the image, the path the kernel shows for it, the file it holds. */
  private record Attached(Path image, Path shown, FileId id, int blockSize) {}

  private final Map<String, Attached> attached = new TreeMap<>();
  private final List<String> refreshed = new ArrayList<>();
  private final Set<String> heldElsewhere = new TreeSet<>();
  private int next;

  @Override
  public String attach(Path image, int directIoBlockSize) {
    return attach(image, image, directIoBlockSize);
  }

  /**
   * Attaches {@code image} as a driver in another mount namespace did, one that is gone now: the
   * kernel shows the file by {@code shown}, its path relative to the vanished mount.
   */
  public String attachShownAs(Path image, Path shown) {
    return attach(image, shown, 0);
  }

  private synchronized String attach(Path image, Path shown, int blockSize) {
    FileId id =
        FileId.of(image).orElseThrow(() -> new IllegalStateException("no image file " + image));
    String device = "/dev/loop" + next++;
    attached.put(device, new Attached(image, shown, id, blockSize));
    return device;
  }

  /**
   * The mount the attached devices' files were opened through is gone (the driver's container, with
   * the pool bound in at {@code mount}, was killed): the kernel now names each file relative to it.
   */
  public synchronized void mountGone(Path mount) {
    attached.replaceAll(
        (device, a) ->
            a.shown().startsWith(mount)
                ? new Attached(
                    a.image(),
                    Path.of("/").resolve(mount.relativize(a.shown())),
                    a.id(),
                    a.blockSize())
                : a);
  }

  @Override
  public synchronized List<LoopDevice> list() {
    List<LoopDevice> devices = new ArrayList<>();
    attached.forEach(
        (device, a) ->
            devices.add(
                new LoopDevice(
                    device, a.shown(), !FileId.of(a.image()).equals(Optional.of(a.id())))));
    return devices;
  }

  /** The direct-I/O block size {@code device} was attached with; 0 for a buffered one. */
  public synchronized int blockSize(String device) {
    return attached.get(device).blockSize();
  }

  @Override
  public synchronized Optional<FileId> backingFileId(String device) {
    return Optional.ofNullable(attached.get(device)).map(Attached::id);
  }

  @Override
  public synchronized void refreshSize(String device) {
    refreshed.add(device);
  }

  @Override
  public synchronized void detach(String device) {
    if (heldElsewhere.contains(device) && attached.containsKey(device)) {
      throw new MountException(
          MountException.Kind.BUSY,
          device + " still holds " + attached.get(device).image() + ": something else has it open",
          null);
    }
    if (attached.remove(device) == null) {
      throw new IllegalStateException(device + " is not attached");
    }
  }

  /**
   * Another opener keeps {@code device} from now on: a detach leaves it bound and fails as BUSY, as
   * {@link Losetup}'s does when its wait is over, until {@link #letGo}.
   */
  public synchronized void holdElsewhere(String device) {
    heldElsewhere.add(device);
  }

  public synchronized void letGo(String device) {
    heldElsewhere.remove(device);
  }

  /** Attached devices and their images. */
  public synchronized Map<String, Path> attached() {
    Map<String, Path> images = new TreeMap<>();
    attached.forEach((device, a) -> images.put(device, a.image()));
    return images;
  }

  public synchronized List<String> refreshed() {
    return new ArrayList<>(refreshed);
  }
}
