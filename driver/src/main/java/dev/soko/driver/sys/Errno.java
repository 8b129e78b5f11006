package dev.soko.driver.sys;

import java.util.Map;

/**
 * Names of the errno values the mount, loop and btrfs calls return (Linux numbering, the same on
 * x86-64 and arm64), so a log says {@code EBUSY} instead of {@code 16}.
 */
public final class Errno {
  public static final int EPERM = 1;
  public static final int ENOENT = 2;
  public static final int EINTR = 4;
  public static final int EIO = 5;
  public static final int ENXIO = 6;
  public static final int EBADF = 9;
  public static final int EAGAIN = 11;
  public static final int ENOMEM = 12;
  public static final int EACCES = 13;
  public static final int EFAULT = 14;
  public static final int ENOTBLK = 15;
  public static final int EBUSY = 16;
  public static final int EEXIST = 17;
  public static final int ENODEV = 19;
  public static final int ENOTDIR = 20;
  public static final int EISDIR = 21;
  public static final int EINVAL = 22;
  public static final int ENFILE = 23;
  public static final int EMFILE = 24;
  public static final int ENOTTY = 25;
  public static final int EFBIG = 27;
  public static final int ENOSPC = 28;
  public static final int EROFS = 30;
  public static final int ENAMETOOLONG = 36;
  public static final int ENOSYS = 38;
  public static final int ENOTEMPTY = 39;
  public static final int ELOOP = 40;
  public static final int ENODATA = 61;
  public static final int EOVERFLOW = 75;
  public static final int EOPNOTSUPP = 95;
  public static final int EUCLEAN = 117;
  public static final int EDQUOT = 122;

  /** Name and glibc's strerror text, for fakes and for a call whose text could not be read. */
  private static final Map<Integer, String[]> KNOWN =
      Map.ofEntries(
          Map.entry(EPERM, new String[] {"EPERM", "Operation not permitted"}),
          Map.entry(ENOENT, new String[] {"ENOENT", "No such file or directory"}),
          Map.entry(EINTR, new String[] {"EINTR", "Interrupted system call"}),
          Map.entry(EIO, new String[] {"EIO", "Input/output error"}),
          Map.entry(ENXIO, new String[] {"ENXIO", "No such device or address"}),
          Map.entry(EBADF, new String[] {"EBADF", "Bad file descriptor"}),
          Map.entry(EAGAIN, new String[] {"EAGAIN", "Resource temporarily unavailable"}),
          Map.entry(ENOMEM, new String[] {"ENOMEM", "Cannot allocate memory"}),
          Map.entry(EACCES, new String[] {"EACCES", "Permission denied"}),
          Map.entry(EFAULT, new String[] {"EFAULT", "Bad address"}),
          Map.entry(ENOTBLK, new String[] {"ENOTBLK", "Block device required"}),
          Map.entry(EBUSY, new String[] {"EBUSY", "Device or resource busy"}),
          Map.entry(EEXIST, new String[] {"EEXIST", "File exists"}),
          Map.entry(ENODEV, new String[] {"ENODEV", "No such device"}),
          Map.entry(ENOTDIR, new String[] {"ENOTDIR", "Not a directory"}),
          Map.entry(EISDIR, new String[] {"EISDIR", "Is a directory"}),
          Map.entry(EINVAL, new String[] {"EINVAL", "Invalid argument"}),
          Map.entry(ENFILE, new String[] {"ENFILE", "Too many open files in system"}),
          Map.entry(EMFILE, new String[] {"EMFILE", "Too many open files"}),
          Map.entry(ENOTTY, new String[] {"ENOTTY", "Inappropriate ioctl for device"}),
          Map.entry(EFBIG, new String[] {"EFBIG", "File too large"}),
          Map.entry(ENOSPC, new String[] {"ENOSPC", "No space left on device"}),
          Map.entry(EROFS, new String[] {"EROFS", "Read-only file system"}),
          Map.entry(ENAMETOOLONG, new String[] {"ENAMETOOLONG", "File name too long"}),
          Map.entry(ENOSYS, new String[] {"ENOSYS", "Function not implemented"}),
          Map.entry(ENOTEMPTY, new String[] {"ENOTEMPTY", "Directory not empty"}),
          Map.entry(ENODATA, new String[] {"ENODATA", "No data available"}),
          Map.entry(ELOOP, new String[] {"ELOOP", "Too many levels of symbolic links"}),
          Map.entry(EOVERFLOW, new String[] {"EOVERFLOW", "Value too large for defined data type"}),
          Map.entry(EOPNOTSUPP, new String[] {"EOPNOTSUPP", "Operation not supported"}),
          Map.entry(EUCLEAN, new String[] {"EUCLEAN", "Structure needs cleaning"}),
          Map.entry(EDQUOT, new String[] {"EDQUOT", "Disk quota exceeded"}));

  private Errno() {}

  /** The symbolic name, or {@code errno N} for one this table does not know. */
  public static String name(int errno) {
    String[] known = KNOWN.get(errno);
    return known == null ? "errno " + errno : known[0];
  }

  static String text(int errno) {
    String[] known = KNOWN.get(errno);
    return known == null ? "Unknown error " + errno : known[1];
  }
}
