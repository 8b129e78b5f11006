package dev.soko.driver.btrfs;

import dev.soko.driver.exec.Exec;
import dev.soko.driver.exec.ExecResult;
import dev.soko.driver.sys.LinuxSyscalls;
import dev.soko.driver.sys.SyscallException;
import dev.soko.driver.sys.Syscalls;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * The btrfs operations a subvolume pool needs. Changes (subvolume create, snapshot, delete, qgroup
 * limit) run the btrfs tool (btrfs-progs) through {@link Exec}; reads that happen on every call
 * (which filesystem, which subvolume, how much it references) are a system call or a sysfs file,
 * never a process.
 */
public final class Btrfs {
  /** statfs(2)'s f_type of btrfs (BTRFS_SUPER_MAGIC). */
  public static final long MAGIC = 0x9123683EL;

  /** BTRFS_IOC_FS_INFO: _IOR(0x94, 31, struct btrfs_ioctl_fs_info_args), 1024 bytes. */
  static final long IOC_FS_INFO = 0x8400941FL;

  /** BTRFS_IOC_INO_LOOKUP: _IOWR(0x94, 18, struct btrfs_ioctl_ino_lookup_args), 4096 bytes. */
  static final long IOC_INO_LOOKUP = 0xD0009412L;

  /** FS_IOC_GETFLAGS and FS_IOC_SETFLAGS: _IOR and _IOW('f', 1 and 2, long); an int travels. */
  static final long IOC_GETFLAGS = 0x80086601L;

  static final long IOC_SETFLAGS = 0x40086602L;

  /** FS_NOCOW_FL: data written in place, inherited by what is created in the directory. */
  static final int NOCOW = 0x00800000;

  /** The inode number of every subvolume's root directory (BTRFS_FIRST_FREE_OBJECTID). */
  static final long SUBVOLUME_ROOT_INODE = 256;

  private final Exec exec;
  private final Syscalls sys;
  private final Path sysfs;

  public Btrfs(Exec exec) {
    this(exec, new LinuxSyscalls(), Path.of("/sys/fs/btrfs"));
  }

  /** {@code sysfs} is where filesystems are listed by UUID ({@code /sys/fs/btrfs}). */
  public Btrfs(Exec exec, Syscalls sys, Path sysfs) {
    this.exec = exec;
    this.sys = sys;
    this.sysfs = sysfs;
  }

  /** True when {@code path} lies on a btrfs filesystem (statfs magic). */
  public boolean isBtrfs(Path path) {
    try {
      return sys.filesystemType(path.toString()) == MAGIC;
    } catch (SyscallException | IllegalStateException e) {
      throw new BtrfsException(BtrfsException.Kind.FAILED, e.getMessage(), e);
    }
  }

  /**
   * True when the btrfs holding {@code path} has quotas (qgroups) enabled: without them a limit is
   * not enforced and usage is not counted. Told by sysfs ({@code <fsid>/qgroups} exists only then),
   * or by the tool where sysfs does not show this filesystem.
   */
  public boolean quotasEnabled(Path path) {
    Path fs = sysfs.resolve(fsid(path));
    if (Files.isDirectory(fs)) {
      return Files.isDirectory(fs.resolve("qgroups"));
    }
    ExecResult result =
        exec.run(List.of("btrfs", "qgroup", "show", "-f", "--raw", path.toString()), Exec.SHORT);
    return result.ok();
  }

  /** The filesystem's UUID as sysfs names it, from BTRFS_IOC_FS_INFO. */
  String fsid(Path path) {
    byte[] info = new byte[1024];
    withDescriptor(path, fd -> sys.ioctl(fd, IOC_FS_INFO, info));
    // struct btrfs_ioctl_fs_info_args: __u64 max_id, __u64 num_devices, __u8 fsid[16], ...
    String hex = HexFormat.of().formatHex(info, 16, 32);
    return hex.substring(0, 8)
        + "-"
        + hex.substring(8, 12)
        + "-"
        + hex.substring(12, 16)
        + "-"
        + hex.substring(16, 20)
        + "-"
        + hex.substring(20);
  }

  /** The subvolume ID of the subvolume {@code path} is in, from BTRFS_IOC_INO_LOOKUP. */
  public long subvolumeId(Path path) {
    byte[] args = new byte[4096];
    // struct btrfs_ioctl_ino_lookup_args: __u64 treeid (0: the fd's own tree), __u64 objectid.
    ByteBuffer.wrap(args).order(ByteOrder.nativeOrder()).putLong(8, SUBVOLUME_ROOT_INODE);
    withDescriptor(path, fd -> sys.ioctl(fd, IOC_INO_LOOKUP, args));
    return ByteBuffer.wrap(args).order(ByteOrder.nativeOrder()).getLong(0);
  }

  /** True when {@code path} is the root of a subvolume (not a plain directory or file). */
  public boolean isSubvolume(Path path) {
    try {
      Object inode = Files.readAttributes(path, "unix:ino").get("ino");
      return Files.isDirectory(path) && Long.valueOf(SUBVOLUME_ROOT_INODE).equals(inode);
    } catch (NoSuchFileException e) {
      return false;
    } catch (IOException e) {
      throw new BtrfsException(BtrfsException.Kind.FAILED, "cannot stat " + path + ": " + e, e);
    }
  }

  public void createSubvolume(Path path) {
    run("subvolume", "create", path.toString());
  }

  /**
   * Marks a directory no-copy-on-write (chattr +C): files and directories made in it from now on
   * write their data in place, as on ext4 or xfs, without btrfs's data checksums. Extents a
   * snapshot shares are still copied once on their first overwrite, so snapshots keep working.
   */
  public void disableCopyOnWrite(Path dir) {
    byte[] flags = new byte[8];
    withDescriptor(
        dir,
        fd -> {
          sys.ioctl(fd, IOC_GETFLAGS, flags);
          ByteBuffer b = ByteBuffer.wrap(flags).order(ByteOrder.nativeOrder());
          b.putInt(0, b.getInt(0) | NOCOW);
          sys.ioctl(fd, IOC_SETFLAGS, flags);
        });
  }

  /** A snapshot of the subvolume {@code source} at {@code target}: O(1), shares every extent. */
  public void snapshot(Path source, Path target, boolean readOnly) {
    requireSubvolume(source);
    List<String> args = new ArrayList<>(List.of("subvolume", "snapshot"));
    if (readOnly) {
      args.add("-r");
    }
    args.addAll(List.of(source.toString(), target.toString()));
    run(args.toArray(String[]::new));
  }

  /**
   * Deletes a subvolume and its qgroup. The kernel drops a deleted subvolume's extents in the
   * background and, until it has, keeps its qgroup (busy); older kernels keep it even after. So the
   * delete is committed, the cleaner awaited ({@code subvolume sync}), and the qgroup destroyed
   * when it is still there: otherwise every deleted volume would leave a qgroup behind.
   */
  public void deleteSubvolume(Path path) {
    long id = subvolumeId(path);
    Path parent = path.getParent();
    run("subvolume", "delete", "--commit-after", path.toString());
    run("subvolume", "sync", parent.toString(), Long.toString(id));
    ExecResult destroy =
        exec.run(List.of("btrfs", "qgroup", "destroy", "0/" + id, parent.toString()), Exec.SHORT);
    // "No such file or directory": the kernel removed the qgroup with the subvolume (Linux 6.x).
    if (!destroy.ok() && !destroy.stderr().contains("No such file or directory")) {
      throw new BtrfsException(BtrfsException.Kind.FAILED, destroy.describe(), null);
    }
  }

  /** Sets the subvolume's qgroup limit on referenced bytes: writes beyond it fail with EDQUOT. */
  public void limit(Path subvolume, long bytes) {
    requireSubvolume(subvolume);
    run("qgroup", "limit", Long.toString(bytes), subvolume.toString());
  }

  /** The subvolume's qgroup numbers, from sysfs, or from the tool where sysfs lacks them. */
  public QgroupUsage usage(Path subvolume) {
    requireSubvolume(subvolume);
    long id = subvolumeId(subvolume);
    Path qgroup = sysfs.resolve(fsid(subvolume)).resolve("qgroups").resolve("0_" + id);
    if (Files.isDirectory(qgroup)) {
      return new QgroupUsage(
          number(qgroup.resolve("referenced")), number(qgroup.resolve("max_referenced")));
    }
    String out = run("qgroup", "show", "-r", "--raw", "-f", subvolume.toString());
    return parseShow(out, id);
  }

  /** Of {@code btrfs qgroup show -r --raw}: the row of qgroup 0/ID (referenced, max referenced). */
  static QgroupUsage parseShow(String out, long id) {
    for (String line : out.split("\n")) {
      String[] cols = line.strip().split("\\s+");
      if (cols.length >= 4 && cols[0].equals("0/" + id)) {
        long limit = cols[3].equals("none") ? 0 : Long.parseLong(cols[3]);
        return new QgroupUsage(Long.parseLong(cols[1]), limit);
      }
    }
    throw BtrfsException.of(
        BtrfsException.Kind.FAILED, "btrfs qgroup show has no row for 0/%d", id);
  }

  private static long number(Path file) {
    try {
      return Long.parseLong(Files.readString(file).strip());
    } catch (IOException | NumberFormatException e) {
      throw new BtrfsException(BtrfsException.Kind.FAILED, "cannot read " + file + ": " + e, e);
    }
  }

  private void requireSubvolume(Path path) {
    if (!isSubvolume(path)) {
      throw BtrfsException.of(
          BtrfsException.Kind.SUBVOLUME_MISSING, "subvolume %s is missing", path);
    }
  }

  private String run(String... args) {
    List<String> command = new ArrayList<>(List.of("btrfs"));
    command.addAll(List.of(args));
    ExecResult result = exec.run(command, Exec.LONG);
    if (!result.ok()) {
      throw new BtrfsException(BtrfsException.Kind.FAILED, result.describe(), null);
    }
    return result.stdout();
  }

  private interface FdCall {
    void call(int fd);
  }

  private void withDescriptor(Path path, FdCall call) {
    try {
      int fd = sys.open(path.toString(), 0); // O_RDONLY: directories open so too
      try {
        call.call(fd);
      } finally {
        sys.close(fd);
      }
    } catch (SyscallException | IllegalStateException e) {
      throw new BtrfsException(BtrfsException.Kind.FAILED, e.getMessage(), e);
    }
  }
}
