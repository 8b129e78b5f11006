package dev.soko.driver.btrfs;

import dev.soko.driver.exec.Exec;
import dev.soko.driver.exec.ExecResult;
import dev.soko.driver.sys.Errno;
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
 * The btrfs operations a subvolume pool needs, as ioctls on the pool's directories (structures in
 * {@link IoctlArgs}): no process on the create, snapshot, limit or delete path, each of which cost
 * a btrfs-progs run before. Reads that happen on every call (which filesystem, which subvolume, how
 * much it references) are a system call or a sysfs file. The btrfs tool ({@link Exec}) is left only
 * for the reads where sysfs does not show the filesystem.
 *
 * <p>Not every change is on disk when its ioctl returns: a subvolume create, a qgroup limit and the
 * no-copy-on-write flag wait for the filesystem's next transaction commit (30 s at most by
 * default); a snapshot commits at once. Recovery puts back a limit and the flag a power cut undid.
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

  /** A new, empty subvolume at {@code path}, whose parent directory exists. */
  public void createSubvolume(Path path) {
    byte[] args = IoctlArgs.volArgs(name(path));
    changeIn(
        path.getParent(),
        "create subvolume " + path,
        fd -> sys.ioctl(fd, IoctlArgs.IOC_SUBVOL_CREATE, args));
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

  /** True when {@link #disableCopyOnWrite} holds for {@code dir} (its inode has FS_NOCOW_FL). */
  public boolean copyOnWriteDisabled(Path dir) {
    byte[] flags = new byte[8];
    withDescriptor(dir, fd -> sys.ioctl(fd, IOC_GETFLAGS, flags));
    return (ByteBuffer.wrap(flags).order(ByteOrder.nativeOrder()).getInt(0) & NOCOW) != 0;
  }

  /** A snapshot of the subvolume {@code source} at {@code target}: O(1), shares every extent. */
  public void snapshot(Path source, Path target, boolean readOnly) {
    requireSubvolume(source);
    String name = name(target);
    withDescriptor(
        source,
        sourceFd -> {
          byte[] args = IoctlArgs.snapshotArgs(sourceFd, name, readOnly);
          changeIn(
              target.getParent(),
              "snapshot " + source + " at " + target,
              fd -> sys.ioctl(fd, IoctlArgs.IOC_SNAP_CREATE_V2, args));
        });
  }

  /**
   * Deletes a subvolume and returns its ID. The kernel frees its extents in the background (the
   * cleaner, after the next commit) and keeps its qgroup until then; Linux 6.x removes that qgroup
   * once the cleaner is done, older kernels leave it for {@link #destroyQgroup}. Nothing is waited
   * for: a delete that a power cut undoes brings back a subvolume without a record, which recovery
   * removes as an orphan.
   */
  public long deleteSubvolume(Path path) {
    long id = subvolumeId(path);
    byte[] args = IoctlArgs.volArgs(name(path));
    changeIn(
        path.getParent(),
        "delete subvolume " + path,
        fd -> sys.ioctl(fd, IoctlArgs.IOC_SNAP_DESTROY, args));
    return id;
  }

  /** Sets the subvolume's qgroup limit on referenced bytes: writes beyond it fail with EDQUOT. */
  public void limit(Path subvolume, long bytes) {
    requireSubvolume(subvolume);
    byte[] args = IoctlArgs.limitArgs(bytes);
    changeIn(
        subvolume, "limit " + subvolume, fd -> sys.ioctl(fd, IoctlArgs.IOC_QGROUP_LIMIT, args));
  }

  /**
   * True when subvolume {@code id} of the filesystem holding {@code onFilesystem} is gone for good:
   * the root tree has no ROOT_ITEM for it, neither a live subvolume's nor that of a deleted one the
   * cleaner has still to drop.
   */
  public boolean subvolumeDropped(Path onFilesystem, long id) {
    byte[] args = IoctlArgs.rootItemSearch(id);
    changeIn(
        onFilesystem,
        "look up subvolume " + id,
        fd -> sys.ioctl(fd, IoctlArgs.IOC_TREE_SEARCH, args));
    return IoctlArgs.itemsFound(args) == 0;
  }

  /** What {@link #destroyQgroup} found. */
  public enum QgroupDestroyed {
    DESTROYED,
    /** There was no such qgroup (the kernel removed it with its subvolume). */
    ABSENT,
    /** The kernel still uses it: its subvolume exists or is being dropped. */
    BUSY
  }

  /** Destroys the level-0 qgroup 0/{@code id} of the filesystem holding {@code onFilesystem}. */
  public QgroupDestroyed destroyQgroup(Path onFilesystem, long id) {
    byte[] args = IoctlArgs.destroyQgroupArgs(id);
    try {
      withDescriptor(onFilesystem, fd -> sys.ioctl(fd, IoctlArgs.IOC_QGROUP_CREATE, args));
      return QgroupDestroyed.DESTROYED;
    } catch (BtrfsException e) {
      int errno = e.getCause() instanceof SyscallException call ? call.errno() : 0;
      if (errno == Errno.ENOENT) {
        return QgroupDestroyed.ABSENT;
      }
      if (errno == Errno.EBUSY) {
        return QgroupDestroyed.BUSY;
      }
      throw e;
    }
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

  /** The subvolume's name in its parent directory, checked (never a path, "." or ".."). */
  private static String name(Path path) {
    Path name = path.getFileName();
    if (name == null || path.getParent() == null) {
      throw BtrfsException.of(BtrfsException.Kind.FAILED, "%s names no subvolume", path);
    }
    return IoctlArgs.checkedName(name.toString());
  }

  /**
   * Runs a change on a descriptor of {@code dir}, its failure typed by errno (no space or quota is
   * the pool's state, anything else the driver's problem) and named with {@code what}.
   */
  private void changeIn(Path dir, String what, FdCall call) {
    try {
      withDescriptor(dir, call);
    } catch (BtrfsException e) {
      if (e.getCause() instanceof SyscallException failed) {
        throw new BtrfsException(
            kindOf(failed.errno()), "cannot " + what + ": " + failed.getMessage(), failed);
      }
      throw e;
    }
  }

  static BtrfsException.Kind kindOf(int errno) {
    return switch (errno) {
      case Errno.ENOSPC, Errno.EDQUOT -> BtrfsException.Kind.NO_SPACE;
      default -> BtrfsException.Kind.FAILED;
    };
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
