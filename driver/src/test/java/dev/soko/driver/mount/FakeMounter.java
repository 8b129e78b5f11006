package dev.soko.driver.mount;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * An in-memory mount table for unit tests. It behaves like the kernel where the engine relies on
 * it: a bind of a mounted directory shows the same source device, a bind of a device node shows as
 * devtmpfs with the node as root, later mounts stack on top of earlier ones, and each device's
 * filesystem has a device number of its own that every mount of it shows. Filesystem options
 * ({@code discard}) show as super options, the rest as the mount's.
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

  private final Map<String, String> deviceNumbers = new HashMap<>();
  private final Set<String> fullDevices = new HashSet<>();
  private RuntimeException mountFailure;
  private RuntimeException growFailure;
  private RuntimeException offlineGrowFailure;
  private final Map<Path, RuntimeException> freezeFailures = new HashMap<>();
  private final Set<Path> frozen = new HashSet<>();

  private static final List<String> SUPER_OPTIONS = List.of("discard", "lazytime", "sync");

  @Override
  public synchronized void mount(String device, Path target, String fsType, List<String> flags) {
    MountOptions.checkFsType(fsType);
    if (mountFailure != null) {
      RuntimeException failure = mountFailure;
      mountFailure = null;
      throw failure;
    }
    List<String> options = new ArrayList<>();
    List<String> superOptions = new ArrayList<>(List.of("rw"));
    for (String flag : MountOptions.checkFlags(flags)) {
      (SUPER_OPTIONS.contains(flag) ? superOptions : options).add(flag);
    }
    if (!options.contains("ro")) {
      options.add(0, "rw");
    }
    String number = deviceNumbers.computeIfAbsent(device, d -> "7:" + deviceNumbers.size());
    table.add(
        new MountEntry(nextId++, 1, number, "/", target, options, fsType, device, superOptions));
    log.add(
        "mount " + device + " " + target + (flags.isEmpty() ? "" : " " + String.join(",", flags)));
  }

  /** Makes the next mount fail with {@code failure}, as mount(2) can. */
  public synchronized void failNextMount(RuntimeException failure) {
    mountFailure = failure;
  }

  /** Makes the next online growth fail with {@code failure}. */
  public synchronized void failNextGrow(RuntimeException failure) {
    growFailure = failure;
  }

  /** Makes the next offline growth fail with {@code failure}. */
  public synchronized void failNextOfflineGrow(RuntimeException failure) {
    offlineGrowFailure = failure;
  }

  /** What a real SystemMounter throws when the kernel refuses to grow a mounted ext4. */
  public static MountException refusedOnlineGrowth() {
    return MountException.notPermitted(
        "the kernel refused to grow the mounted ext4 filesystem because the driver lacks"
            + " CAP_SYS_RESOURCE; it grows offline when the volume is next staged while"
            + " unpublished");
  }

  /** Says the filesystem on {@code device} already fills it: growing it has nothing to do. */
  public synchronized void markFull(String device) {
    fullDevices.add(device);
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
              nextId++,
              1,
              m.device(),
              m.root(),
              target,
              List.of("rw"),
              m.fsType(),
              m.source(),
              m.superOptions());
    } else if (source.toString().startsWith("/dev/")) {
      String root = "/" + source.getFileName();
      entry =
          new MountEntry(
              nextId++, 1, "0:5", root, target, List.of("rw"), "devtmpfs", "udev", List.of("rw"));
    } else {
      entry =
          new MountEntry(
              nextId++,
              1,
              "254:0",
              source.toString(),
              target,
              List.of("rw"),
              "ext4",
              "/dev/vda",
              List.of("rw"));
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
            m.id(),
            m.parentId(),
            m.device(),
            m.root(),
            target,
            options,
            m.fsType(),
            m.source(),
            m.superOptions()));
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
    makeFilesystem(device, fsType, List.of());
  }

  @Override
  public synchronized void makeFilesystem(String device, String fsType, List<String> features) {
    filesystems.put(device, fsType);
    log.add("mkfs " + fsType + (features.isEmpty() ? "" : " " + features) + " " + device);
  }

  @Override
  public synchronized boolean fillsDevice(String device, String fsType) {
    return "ext4".equals(fsType) && fullDevices.contains(device);
  }

  /** Grows ext4 unless {@link #markFull}; refuses, as e2fsck would, while the device is mounted. */
  @Override
  public synchronized boolean growUnmounted(String device, String fsType) {
    if (table.stream().anyMatch(m -> m.source().equals(device))) {
      throw new IllegalStateException(device + " is in use: mounted, cannot check it");
    }
    if (offlineGrowFailure != null) {
      RuntimeException failure = offlineGrowFailure;
      offlineGrowFailure = null;
      throw failure;
    }
    if (!"ext4".equals(fsType) || fullDevices.contains(device)) {
      return false;
    }
    log.add("grow-offline " + fsType + " " + device);
    return true;
  }

  /** Pretends {@code device} already holds a filesystem (as a restored image would). */
  public synchronized void markFormatted(String device, String fsType) {
    filesystems.put(device, fsType);
  }

  @Override
  public synchronized void growFilesystem(String device, Path mountPoint, String fsType) {
    if (growFailure != null) {
      RuntimeException failure = growFailure;
      growFailure = null;
      throw failure;
    }
    log.add("grow " + fsType + " " + device + " " + mountPoint);
  }

  @Override
  public synchronized FsStats stats(Path mountPoint) {
    return new FsStats(100L << 20, 60L << 20, 50L << 20, 1000, 900);
  }

  @Override
  public synchronized void freeze(Path mountPoint) {
    RuntimeException failure = freezeFailures.remove(mountPoint);
    if (failure != null) {
      throw failure;
    }
    log.add("freeze " + mountPoint);
    frozen.add(mountPoint);
  }

  @Override
  public synchronized void unfreeze(Path mountPoint) {
    log.add("unfreeze " + mountPoint);
    frozen.remove(mountPoint);
  }

  /** Makes the next freeze of {@code mountPoint} fail with {@code failure}, as fsfreeze can. */
  public synchronized void failNextFreeze(Path mountPoint, RuntimeException failure) {
    freezeFailures.put(mountPoint, failure);
  }

  /** The filesystems frozen and not thawed since: a writer to one of them would hang. */
  public synchronized Set<Path> frozen() {
    return new HashSet<>(frozen);
  }

  /** Every operation so far, in order, e.g. {@code "mkfs ext4 /dev/loop0"}. */
  public synchronized List<String> log() {
    return new ArrayList<>(log);
  }
}
