package dev.soko.driver.mount;

import dev.soko.driver.exec.Exec;
import dev.soko.driver.exec.ExecResult;
import dev.soko.driver.sys.LinuxSyscalls;
import dev.soko.driver.sys.StatVfs;
import dev.soko.driver.sys.Syscalls;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The real {@link Mounter}. What every stage and publish does (mount, bind, remount, unmount,
 * statistics) is a system call, because spawning mount(8) from the JVM costs ~3-4 ms per call
 * against ~0.05-1.4 ms of kernel work; the rarer, data-sized work (mkfs, resize, fsfreeze, blkid)
 * runs e2fsprogs, xfsprogs and util-linux through {@link Exec}.
 */
public final class SystemMounter implements Mounter {
  /** umount2(2): do not follow a symlink at the target (kubelet's targets are never links). */
  static final int UMOUNT_NOFOLLOW = 8;

  private final Exec exec;
  private final Syscalls sys;
  private final Path mountInfo;
  private final Path sysBlock;

  public SystemMounter(Exec exec) {
    this(exec, Path.of("/proc/self/mountinfo"));
  }

  public SystemMounter(Exec exec, Path mountInfo) {
    this(exec, new LinuxSyscalls(), mountInfo, Path.of("/sys/class/block"));
  }

  /** {@code sysBlock} is where block devices' sizes are read ({@code NAME/size}, in sectors). */
  SystemMounter(Exec exec, Syscalls sys, Path mountInfo, Path sysBlock) {
    this.exec = exec;
    this.sys = sys;
    this.mountInfo = mountInfo;
    this.sysBlock = sysBlock;
  }

  @Override
  public List<MountEntry> mounts() {
    return MountInfo.read(mountInfo);
  }

  @Override
  public void mount(String device, Path target, String fsType, List<String> flags) {
    MountOptions.checkFsType(fsType);
    // A clone or restore carries its source's XFS UUID and XFS refuses to mount a second
    // filesystem with a UUID that is already mounted; copies must mount beside their source.
    MountFlags mapped = MountFlags.of(flags, "xfs".equals(fsType) ? List.of("nouuid") : List.of());
    KernelErrors.run(
        () -> sys.mount(device, target.toString(), fsType, mapped.bits(), mapped.data()));
  }

  @Override
  public void bind(Path source, Path target) {
    KernelErrors.run(
        () -> sys.mount(source.toString(), target.toString(), null, MountFlags.MS_BIND, null));
  }

  /**
   * A bind mount's per-mount flags change only through a remount of the bind itself, which sets
   * exactly the flags it is given; so the mount's current flags are read first and kept unless the
   * request changes them (what mount(8)'s {@code -o remount,bind,FLAGS} does). Filesystem options
   * such as {@code discard} are left out: kubelet passes a volume's mount options to publish as
   * well as stage, they took effect at stage, and a bind remount ignores them.
   */
  @Override
  public void remountBind(Path target, List<String> flags) {
    List<String> current = mountAt(target).map(MountEntry::options).orElse(List.of());
    long bits =
        MountFlags.MS_REMOUNT | MountFlags.MS_BIND | MountFlags.forBindRemount(current, flags);
    KernelErrors.run(() -> sys.mount("none", target.toString(), null, bits, null));
  }

  @Override
  public void unmount(Path target) {
    KernelErrors.run(() -> sys.umount2(target.toString(), UMOUNT_NOFOLLOW));
  }

  @Override
  public Optional<String> detectFilesystem(String device) {
    // The filesystems the driver makes are recognised from their superblock without a process;
    // only a device that starts with zeros (a new volume, or a signature further in) asks blkid.
    switch (superblock(device).kind()) {
      case EXT4:
        return Optional.of("ext4");
      case XFS:
        return Optional.of("xfs");
      case OTHER:
        return Optional.of("unknown");
      case ZEROS:
      default:
        break;
    }
    // -p probes the device itself instead of trusting blkid's cache.
    ExecResult result =
        exec.run(List.of("blkid", "-p", "-o", "value", "-s", "TYPE", "--", device), Exec.SHORT);
    if (result.exitCode() == 2) {
      return Optional.empty(); // blkid(8): 2 means no identifiable signature was found
    }
    if (!result.ok()) {
      throw MountException.failed(result.describe());
    }
    String type = result.stdout().strip();
    // A signature without a TYPE (e.g. a partition table) still means "not blank": never format it.
    return Optional.of(type.isEmpty() ? "unknown" : type);
  }

  @Override
  public void makeFilesystem(String device, String fsType) {
    makeFilesystem(device, fsType, List.of());
  }

  @Override
  public void makeFilesystem(String device, String fsType, List<String> features) {
    List<String> command =
        switch (MountOptions.checkFsType(fsType)) {
          // Lazy init keeps mkfs of a large sparse image fast; the kernel finishes it in the
          // background after mount. 4 KiB blocks and sectors, whatever the size and the device
          // says: the filesystem then mounts on a direct-I/O device with the pool's block size
          // (VolumeGeometry) and stays mountable on a 512-byte one.
          case "ext4" -> ext4Command(device, features);
          case "xfs" ->
              List.of("mkfs.xfs", "-q", "-s", "size=" + VolumeGeometry.NEW_FILESYSTEM_UNIT, device);
          default -> throw new IllegalStateException(fsType);
        };
    exec.check(command, Exec.LONG);
  }

  private static List<String> ext4Command(String device, List<String> features) {
    List<String> command =
        new ArrayList<>(
            List.of(
                "mkfs.ext4",
                "-q",
                "-b",
                Integer.toString(VolumeGeometry.NEW_FILESYSTEM_UNIT),
                "-E",
                "lazy_itable_init=1,lazy_journal_init=1"));
    if (!features.isEmpty()) {
      command.addAll(List.of("-O", String.join(",", features)));
    }
    command.add(device);
    return command;
  }

  @Override
  public boolean fillsDevice(String device, String fsType) {
    if (!"ext4".equals(fsType)) {
      return false;
    }
    // Read through the device's page cache, which a mounted ext4 writes its superblock through:
    // right also while mounted.
    long filesystemBytes =
        superblock(device)
            .ext4Bytes()
            .orElseThrow(() -> MountException.failed(device + " holds no ext4 superblock"));
    return filesystemBytes >= deviceBytes(device);
  }

  @Override
  public boolean growUnmounted(String device, String fsType) {
    if (!"ext4".equals(fsType) || fillsDevice(device, fsType)) {
      return false;
    }
    // resize2fs insists on a freshly checked filesystem when it is not mounted. e2fsck -p exits 1
    // when it fixed something harmless; anything above that is a real problem.
    ExecResult check = exec.run(List.of("e2fsck", "-f", "-p", device), Exec.LONG);
    if (check.exitCode() > 1) {
      // e2fsck says why on stdout ("/dev/loop3 is in use.", the errors it found) and on stderr
      // only that it stopped.
      boolean both = !check.stdout().isBlank() && !check.stderr().isBlank();
      throw MountException.failed(
          check.describe() + (both ? " (" + check.stdout().strip() + ")" : ""));
    }
    exec.check(List.of("resize2fs", device), Exec.LONG);
    return true;
  }

  private static Superblock superblock(String device) {
    try {
      return Superblock.read(Path.of(device));
    } catch (IOException e) {
      throw MountException.failed("cannot read the superblock of " + device, e);
    }
  }

  /**
   * A block device's size from sysfs (512-byte sectors), as blockdev would say, without a process.
   */
  private long deviceBytes(String device) {
    Path size = sysBlock.resolve(Path.of(device).getFileName().toString()).resolve("size");
    try {
      return Long.parseLong(Files.readString(size).strip()) * 512;
    } catch (IOException | NumberFormatException e) {
      throw MountException.failed("cannot read the size of " + device + " from " + size, e);
    }
  }

  @Override
  public void growFilesystem(String device, Path mountPoint, String fsType) {
    List<String> command =
        switch (MountOptions.checkFsType(fsType)) {
          case "ext4" -> List.of("resize2fs", device);
          case "xfs" -> List.of("xfs_growfs", mountPoint.toString());
          default -> throw new IllegalStateException(fsType);
        };
    ExecResult result = exec.run(command, Exec.LONG);
    if (!result.ok()
        && (result.stderr().contains("Permission denied")
            || result.stderr().contains("Operation not permitted"))) {
      // The kernel grows a mounted ext4 only with CAP_SYS_RESOURCE (resize2fs says "Permission
      // denied to resize filesystem"), a mounted xfs only with CAP_SYS_ADMIN (EPERM). A sandbox
      // without them is the caller's setup to fix, not a driver fault: FAILED_PRECONDITION.
      // An unmounted ext4 grows without the capability (at stage, or a node expansion of an
      // unpublished volume); xfs grows only while mounted.
      throw MountException.notPermitted(
          "the kernel refused to grow the mounted %s filesystem because the driver lacks %s; %s",
          fsType,
          "ext4".equals(fsType) ? "CAP_SYS_RESOURCE" : "CAP_SYS_ADMIN",
          "ext4".equals(fsType)
              ? "it grows offline when the volume is next staged while unpublished"
              : "xfs grows only while mounted, so the driver needs that capability");
    }
    if (!result.ok()) {
      throw MountException.failed(result.describe());
    }
  }

  @Override
  public FsStats stats(Path mountPoint) {
    StatVfs st = KernelErrors.call(() -> sys.statvfs(mountPoint.toString()));
    long unit = st.fragmentSize();
    return new FsStats(
        unit * st.blocks(),
        unit * st.freeBlocks(),
        unit * st.availableBlocks(),
        st.files(),
        st.freeFiles());
  }

  @Override
  public void freeze(Path mountPoint) {
    exec.check(List.of("fsfreeze", "--freeze", mountPoint.toString()), Exec.SHORT);
  }

  @Override
  public void unfreeze(Path mountPoint) {
    exec.check(List.of("fsfreeze", "--unfreeze", mountPoint.toString()), Exec.SHORT);
  }
}
