package dev.soko.driver.sys;

/**
 * A system call that returned -1: the call as the driver made it, the errno, its symbolic name and
 * the C library's text for it, e.g. {@code umount2 /k/t: EINVAL (Invalid argument)}.
 */
public final class SyscallException extends RuntimeException {
  private final String call;
  private final int errno;

  public SyscallException(String call, int errno, String text) {
    super(call + ": " + Errno.name(errno) + " (" + text + ")");
    this.call = call;
    this.errno = errno;
  }

  /** A failure with the C library's standard text for {@code errno} (for fakes and tests). */
  public SyscallException(String call, int errno) {
    this(call, errno, Errno.text(errno));
  }

  public String call() {
    return call;
  }

  public int errno() {
    return errno;
  }

  public String errnoName() {
    return Errno.name(errno);
  }
}
