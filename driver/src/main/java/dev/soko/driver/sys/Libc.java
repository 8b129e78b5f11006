package dev.soko.driver.sys;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Platform;

/**
 * The C library functions {@link LinuxSyscalls} calls, bound by JNA's direct mapping. Loading this
 * class loads JNA and its native stub, so only the first system call does that. The argument types
 * are plain Java ones (JNA copies a {@code byte[]} in and out around the call, and passes a null
 * String as NULL); {@code long} is the C {@code unsigned long} of LP64.
 */
final class Libc {
  /** Why the binding failed, or null: kept so every call fails with it instead of an Error. */
  private static final String PROBLEM = bind();

  private static String bind() {
    try {
      // Platform and Native initialise JNA (unpacking its stub), so they belong inside the try.
      if (!Platform.isLinux() || Native.LONG_SIZE != 8) {
        return "the driver's system calls are written for 64-bit Linux, not "
            + Platform.RESOURCE_PREFIX;
      }
      // The process's own symbols: libc is loaded already, so no library search is needed. (JNA's
      // NativeLibrary still runs "ldconfig -p" once when its class initialises, for its search
      // path: one process for the driver's lifetime, at the first mount.)
      Native.register(Libc.class, NativeLibrary.getProcess());
      return null;
    } catch (LinkageError e) {
      return "cannot load JNA's native stub for mount and loop-device calls ("
          + e.getMessage()
          + "); give it a writable, executable directory with -Djna.tmpdir=DIR or point"
          + " -Djna.boot.library.path at an unpacked libjnidispatch.so (SOKO_JAVA_OPTS)";
    }
  }

  /** Fails with the reason the binding failed, if it did. */
  static void requireBound() {
    if (PROBLEM != null) {
      throw new IllegalStateException(PROBLEM);
    }
  }

  private Libc() {}

  static native int mount(String source, String target, String type, long flags, String data);

  static native int umount2(String target, int flags);

  static native int open(String path, int flags);

  static native int close(int fd);

  static native int ioctl(int fd, long request, long argument);

  static native int ioctl(int fd, long request, byte[] argument);

  static native int fcntl(int fd, int command, long argument);

  static native int statvfs(String path, byte[] buffer);

  static native int statfs(String path, byte[] buffer);

  static native int syncfs(int fd);

  static native String strerror(int errno);

  /** The errno JNA saved right after this thread's last native call. */
  static int lastError() {
    return Native.getLastError();
  }
}
