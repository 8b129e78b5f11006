package dev.soko.driver.sys;

/**
 * The few Linux system calls the driver makes on the stage/publish path, one method per call and
 * nothing more, so the logic above them (flag mapping, loop-device set-up, retries) is plain Java
 * that a hand-written fake can test. A failed call throws {@link SyscallException} with its errno.
 */
public interface Syscalls {

  /** mount(2). {@code fsType} and {@code data} may be null (a bind or remount needs neither). */
  void mount(String source, String target, String fsType, long flags, String data);

  /** umount2(2). */
  void umount2(String target, int flags);

  /**
   * open(2) of an existing file; {@code O_CLOEXEC} is always added so no descriptor leaks into the
   * tools the driver still spawns (mkfs, resize2fs).
   *
   * @return the new file descriptor
   */
  int open(String path, int flags);

  void close(int fd);

  /** ioctl(2) whose argument is a number (or none). Returns the call's non-negative result. */
  int ioctl(int fd, long request, long argument);

  /** ioctl(2) whose argument points at {@code struct}, which the kernel may read and write. */
  int ioctl(int fd, long request, byte[] struct);

  /** fcntl(2) whose argument is a number (or none). Returns the call's non-negative result. */
  int fcntl(int fd, int command, long argument);

  /** statvfs(3) of the filesystem holding {@code path}. */
  StatVfs statvfs(String path);

  /**
   * statfs(2)'s {@code f_type} of the filesystem holding {@code path}: the filesystem's magic
   * number (btrfs is 0x9123683E), which statvfs does not report.
   */
  long filesystemType(String path);

  /** syncfs(2): writes back everything of the filesystem that holds {@code fd}. */
  void syncfs(int fd);
}
