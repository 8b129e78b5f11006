package dev.soko.driver.mount;

import dev.soko.driver.exec.Exec;
import dev.soko.driver.exec.ExecResult;
import dev.soko.driver.volume.StorageException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** The real {@link Mounter}, on util-linux, e2fsprogs and xfsprogs, run through {@link Exec}. */
public final class SystemMounter implements Mounter {
  private final Exec exec;
  private final Path mountInfo;
  private final Path sysBlock;

  public SystemMounter(Exec exec) {
    this(exec, Path.of("/proc/self/mountinfo"));
  }

  public SystemMounter(Exec exec, Path mountInfo) {
    this(exec, mountInfo, Path.of("/sys/class/block"));
  }

  /** {@code sysBlock} is where block devices' sizes are read ({@code NAME/size}, in sectors). */
  SystemMounter(Exec exec, Path mountInfo, Path sysBlock) {
    this.exec = exec;
    this.mountInfo = mountInfo;
    this.sysBlock = sysBlock;
  }

  @Override
  public List<MountEntry> mounts() {
    return MountInfo.read(mountInfo);
  }

  @Override
  public void mount(String device, Path target, String fsType, List<String> flags) {
    List<String> command =
        new ArrayList<>(List.of("mount", "-t", MountOptions.checkFsType(fsType)));
    List<String> options = new ArrayList<>(MountOptions.checkFlags(flags));
    if ("xfs".equals(fsType)) {
      // A clone or restore carries its source's XFS UUID and XFS refuses to mount a second
      // filesystem with a UUID that is already mounted; copies must mount beside their source.
      options.add("nouuid");
    }
    if (!options.isEmpty()) {
      command.add("-o");
      command.add(String.join(",", options));
    }
    command.add("--");
    command.add(device);
    command.add(target.toString());
    exec.check(command, Exec.SHORT);
  }

  @Override
  public void bind(Path source, Path target) {
    exec.check(List.of("mount", "--bind", "--", source.toString(), target.toString()), Exec.SHORT);
  }

  @Override
  public void remountBind(Path target, List<String> flags) {
    String options = String.join(",", MountOptions.checkFlags(flags));
    exec.check(
        List.of(
            "mount",
            "-o",
            "remount,bind" + (options.isEmpty() ? "" : "," + options),
            "--",
            target.toString()),
        Exec.SHORT);
  }

  @Override
  public void unmount(Path target) {
    exec.check(List.of("umount", "--", target.toString()), Exec.SHORT);
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
      throw new StorageException(StorageException.Reason.INTERNAL, result.describe());
    }
    String type = result.stdout().strip();
    // A signature without a TYPE (e.g. a partition table) still means "not blank": never format it.
    return Optional.of(type.isEmpty() ? "unknown" : type);
  }

  @Override
  public void makeFilesystem(String device, String fsType) {
    List<String> command =
        switch (MountOptions.checkFsType(fsType)) {
          // Lazy init keeps mkfs of a large sparse image fast; the kernel finishes it in the
          // background after mount.
          case "ext4" ->
              List.of("mkfs.ext4", "-q", "-E", "lazy_itable_init=1,lazy_journal_init=1", device);
          case "xfs" -> List.of("mkfs.xfs", "-q", device);
          default -> throw new IllegalStateException(fsType);
        };
    exec.check(command, Exec.LONG);
  }

  @Override
  public boolean growUnmounted(String device, String fsType) {
    if (!"ext4".equals(fsType)) {
      return false;
    }
    long deviceBytes = deviceBytes(device);
    long filesystemBytes =
        superblock(device)
            .ext4Bytes()
            .orElseThrow(
                () ->
                    new StorageException(
                        StorageException.Reason.INTERNAL, device + " holds no ext4 superblock"));
    if (filesystemBytes >= deviceBytes) {
      return false;
    }
    // resize2fs insists on a freshly checked filesystem when it is not mounted. e2fsck -p exits 1
    // when it fixed something harmless; anything above that is a real problem.
    ExecResult check = exec.run(List.of("e2fsck", "-f", "-p", device), Exec.LONG);
    if (check.exitCode() > 1) {
      throw new StorageException(StorageException.Reason.INTERNAL, check.describe());
    }
    exec.check(List.of("resize2fs", device), Exec.LONG);
    return true;
  }

  private static Superblock superblock(String device) {
    try {
      return Superblock.read(Path.of(device));
    } catch (IOException e) {
      throw StorageException.internal("cannot read the superblock of " + device, e);
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
      throw StorageException.internal("cannot read the size of " + device + " from " + size, e);
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
      throw StorageException.precondition(
          "the kernel refused to grow the mounted %s filesystem (the driver lacks"
              + " %s); it grows when the volume is next staged",
          fsType, "ext4".equals(fsType) ? "CAP_SYS_RESOURCE" : "CAP_SYS_ADMIN");
    }
    if (!result.ok()) {
      throw new StorageException(StorageException.Reason.INTERNAL, result.describe());
    }
  }

  @Override
  public FsStats stats(Path mountPoint) {
    // %S fundamental block size, %b total blocks, %f free, %a available to users,
    // %c total inodes, %d free inodes.
    ExecResult result =
        exec.check(
            List.of("stat", "-f", "-c", "%S %b %f %a %c %d", "--", mountPoint.toString()),
            Exec.SHORT);
    String[] f = result.stdout().strip().split("\\s+");
    if (f.length != 6) {
      throw new StorageException(
          StorageException.Reason.INTERNAL, "unexpected stat output: " + result.stdout());
    }
    long block = Long.parseLong(f[0]);
    return new FsStats(
        block * Long.parseLong(f[1]),
        block * Long.parseLong(f[2]),
        block * Long.parseLong(f[3]),
        Long.parseLong(f[4]),
        Long.parseLong(f[5]));
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
