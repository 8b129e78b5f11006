package dev.soko.driver.sys;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * {@link Syscalls} on the C library, through JNA's direct mapping (one JNI call per system call, no
 * process). JNA is loaded on the first call, never at start-up: this class itself touches no JNA
 * type, so creating it (or the driver starting) costs no memory; only {@link Libc} does.
 *
 * <p>Where JNA's native stub comes from: the driver jar carries {@code libjnidispatch.so}; JNA
 * unpacks it on first use into {@code jna.tmpdir} when set, else {@code $XDG_CACHE_HOME/JNA/temp}
 * ({@code ~/.cache/JNA/temp}), else {@code java.io.tmpdir}, and never loads a system copy (JNA 5's
 * {@code jna.nosys} defaults to true, so a distribution's older stub cannot mismatch the jar).
 * Where none of those is writable and executable (a read-only root filesystem), either point {@code
 * -Djna.tmpdir} at a writable directory (JNA deletes the unpacked file right after loading it, so
 * the directory only needs to be writable and executable for a moment), or unpack {@code
 * com/sun/jna/linux-ARCH/libjnidispatch.so} from the jar at image build time and pass {@code
 * -Djna.boot.library.path=DIR -Djna.nounpack=true}; both go in {@code SOKO_JAVA_OPTS} (both tried).
 * A stub that cannot load fails the first mount (INTERNAL) with a message naming these settings,
 * never the start. The shaded jar carries the x86-64 and arm64 stubs only.
 *
 * <p>Structures are decoded for the LP64 Linux ABI (x86-64 and arm64 share these layouts).
 */
public final class LinuxSyscalls implements Syscalls {
  /** open(2)'s O_CLOEXEC on x86-64 and arm64. */
  static final int O_CLOEXEC = 0x80000;

  private static final int STATVFS_BYTES = 128; // sizeof(struct statvfs) is 112 on LP64
  private static final int STATFS_BYTES = 128; // sizeof(struct statfs) is 120 on LP64

  @Override
  public void mount(String source, String target, String fsType, long flags, String data) {
    Libc.requireBound();
    check(Libc.mount(source, target, fsType, flags, data), "mount " + source + " on " + target);
  }

  @Override
  public void umount2(String target, int flags) {
    Libc.requireBound();
    check(Libc.umount2(target, flags), "umount2 " + target);
  }

  @Override
  public int open(String path, int flags) {
    Libc.requireBound();
    return check(Libc.open(path, flags | O_CLOEXEC), "open " + path);
  }

  @Override
  public void close(int fd) {
    check(Libc.close(fd), "close " + fd);
  }

  @Override
  public int ioctl(int fd, long request, long argument) {
    return check(Libc.ioctl(fd, request, argument), ioctlName(request));
  }

  @Override
  public int ioctl(int fd, long request, byte[] struct) {
    return check(Libc.ioctl(fd, request, struct), ioctlName(request));
  }

  @Override
  public int fcntl(int fd, int command, long argument) {
    return check(Libc.fcntl(fd, command, argument), "fcntl " + fd + " " + command);
  }

  @Override
  public StatVfs statvfs(String path) {
    Libc.requireBound();
    byte[] buffer = new byte[STATVFS_BYTES];
    check(Libc.statvfs(path, buffer), "statvfs " + path);
    return decodeStatVfs(buffer);
  }

  /** struct statfs on LP64 starts with f_type, a long (x86-64 and arm64 alike). */
  @Override
  public long filesystemType(String path) {
    Libc.requireBound();
    byte[] buffer = new byte[STATFS_BYTES];
    check(Libc.statfs(path, buffer), "statfs " + path);
    return ByteBuffer.wrap(buffer).order(ByteOrder.nativeOrder()).getLong(0);
  }

  @Override
  public void syncfs(int fd) {
    check(Libc.syncfs(fd), "syncfs " + fd);
  }

  /** struct statvfs on LP64: f_bsize, f_frsize, f_blocks, f_bfree, f_bavail, f_files, f_ffree. */
  static StatVfs decodeStatVfs(byte[] buffer) {
    ByteBuffer b = ByteBuffer.wrap(buffer).order(ByteOrder.nativeOrder());
    long blockSize = b.getLong(0);
    long fragmentSize = b.getLong(8);
    return new StatVfs(
        fragmentSize != 0 ? fragmentSize : blockSize,
        b.getLong(16),
        b.getLong(24),
        b.getLong(32),
        b.getLong(40),
        b.getLong(48));
  }

  private static String ioctlName(long request) {
    return "ioctl 0x" + Long.toHexString(request);
  }

  private static int check(int result, String call) {
    if (result == -1) {
      int errno = Libc.lastError();
      throw new SyscallException(call, errno, Libc.strerror(errno));
    }
    return result;
  }
}
