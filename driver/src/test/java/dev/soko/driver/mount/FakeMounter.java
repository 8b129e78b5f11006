package dev.soko.driver.mount;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * An in-memory mount table for unit tests. It behaves like the kernel where the engine relies on
 * it: a bind of a mounted directory shows the same source device, a bind of a device node shows as
 * devtmpfs with the node as root, and later mounts stack on top of earlier ones.
 */
public final class FakeMounter implements Mounter {
  private final List<MountEntry> table = new ArrayList<>();
  private final Map<String, String> filesystems = new HashMap<>();
  private final List<String> log = new ArrayList<>();
  private int nextId = 100;

  @Override
  public synchronized List<MountEntry> mounts() {
    return new ArrayList<>(table);
  }

  @Override
  public synchronized void mount(String device, Path target, String fsType, List<String> flags) {
    MountOptions.checkFsType(fsType);
    List<String> options = new ArrayList<>(MountOptions.checkFlags(flags));
    if (!options.contains("ro")) {
      options.add(0, "rw");
    }
    table.add(new MountEntry(nextId++, 1, "7:0", "/", target, options, fsType, device));
    log.add("mount " + device + " " + target);
  }

  private RuntimeException bindFailure;

  /** Makes the next bind fail with {@code failure}, as mount(2) can. */
  public synchronized void failNextBind(RuntimeException failure) {
    bindFailure = failure;
  }

  @Override
  public synchronized void bind(Path source, Path target) {
    if (bindFailure != null) {
      RuntimeException failure = bindFailure;
      bindFailure = null;
      throw failure;
    }
    MountEntry entry;
    Optional<MountEntry> mounted = mountAt(source);
    if (mounted.isPresent()) {
      MountEntry m = mounted.get();
      entry =
          new MountEntry(
              nextId++, 1, m.device(), m.root(), target, List.of("rw"), m.fsType(), m.source());
    } else if (source.toString().startsWith("/dev/")) {
      String root = "/" + source.getFileName();
      entry = new MountEntry(nextId++, 1, "0:5", root, target, List.of("rw"), "devtmpfs", "udev");
    } else {
      entry =
          new MountEntry(
              nextId++, 1, "254:0", source.toString(), target, List.of("rw"), "ext4", "/dev/vda");
    }
    table.add(entry);
    log.add("bind " + source + " " + target);
  }

  @Override
  public synchronized void remountBind(Path target, List<String> flags) {
    MountEntry m = mountAt(target).orElseThrow(() -> new IllegalStateException("not mounted"));
    List<String> options = new ArrayList<>(MountOptions.checkFlags(flags));
    if (!options.contains("ro")) {
      options.add(0, "rw");
    }
    table.set(
        table.indexOf(m),
        new MountEntry(
            m.id(), m.parentId(), m.device(), m.root(), target, options, m.fsType(), m.source()));
    log.add("remount " + target + " " + String.join(",", flags));
  }

  @Override
  public synchronized void unmount(Path target) {
    MountEntry m =
        mountAt(target).orElseThrow(() -> new IllegalStateException(target + " is not mounted"));
    table.remove(m);
    log.add("umount " + target);
  }

  @Override
  public synchronized Optional<String> detectFilesystem(String device) {
    return Optional.ofNullable(filesystems.get(device));
  }

  @Override
  public synchronized void makeFilesystem(String device, String fsType) {
    filesystems.put(device, fsType);
    log.add("mkfs " + fsType + " " + device);
  }

  @Override
  public synchronized boolean growUnmounted(String device, String fsType) {
    log.add("grow-offline " + fsType + " " + device);
    return "ext4".equals(fsType);
  }

  /** Pretends {@code device} already holds a filesystem (as a restored image would). */
  public synchronized void markFormatted(String device, String fsType) {
    filesystems.put(device, fsType);
  }

  @Override
  public synchronized void growFilesystem(String device, Path mountPoint, String fsType) {
    log.add("grow " + fsType + " " + device + " " + mountPoint);
  }

  @Override
  public synchronized FsStats stats(Path mountPoint) {
    return new FsStats(100L << 20, 60L << 20, 50L << 20, 1000, 900);
  }

  @Override
  public synchronized void freeze(Path mountPoint) {
    log.add("freeze " + mountPoint);
  }

  @Override
  public synchronized void unfreeze(Path mountPoint) {
    log.add("unfreeze " + mountPoint);
  }

  /** Every operation so far, in order, e.g. {@code "mkfs ext4 /dev/loop0"}. */
  public synchronized List<String> log() {
    return new ArrayList<>(log);
  }
}
