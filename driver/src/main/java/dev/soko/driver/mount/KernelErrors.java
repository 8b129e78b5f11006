package dev.soko.driver.mount;

import dev.soko.driver.sys.SyscallException;
import java.util.function.Supplier;

/**
 * Turns a failed system call into a {@link MountException} of kind FAILED. Every mount, unmount and
 * loop failure was a plain failure (INTERNAL to a client) when these calls went through mount(8)
 * and losetup(8) (a non-zero exit), and the volume layer relies on that; the message now carries
 * the errno's name and text instead of a tool's stderr, and the {@link SyscallException} stays the
 * cause so that a caller can tell ENXIO apart. A JNA stub that cannot load is FAILED too.
 */
final class KernelErrors {
  private KernelErrors() {}

  static MountException storage(SyscallException e) {
    return MountException.failed(e.getMessage(), e);
  }

  /** Runs one or more system calls, reporting any failure as a MountException. */
  static <T> T call(Supplier<T> calls) {
    try {
      return calls.get();
    } catch (SyscallException e) {
      throw storage(e);
    } catch (IllegalStateException e) {
      throw MountException.failed(e.getMessage(), e);
    }
  }

  static void run(Runnable calls) {
    call(
        () -> {
          calls.run();
          return null;
        });
  }
}
