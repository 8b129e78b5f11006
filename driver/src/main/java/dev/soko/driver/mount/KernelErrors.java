package dev.soko.driver.mount;

import dev.soko.driver.sys.SyscallException;
import dev.soko.driver.volume.StorageException;
import java.util.function.Supplier;

/**
 * Turns a failed system call into the driver's {@link StorageException}. Every mount, unmount and
 * loop failure was INTERNAL when these calls went through mount(8) and losetup(8) (a non-zero
 * exit), and the volume layer relies on that; the message now carries the errno's name and text
 * instead of a tool's stderr. A JNA stub that cannot load is INTERNAL too, with its own reason.
 */
final class KernelErrors {
  private KernelErrors() {}

  static StorageException storage(SyscallException e) {
    return new StorageException(StorageException.Reason.INTERNAL, e.getMessage(), e);
  }

  /** Runs one or more system calls, reporting any failure as a StorageException. */
  static <T> T call(Supplier<T> calls) {
    try {
      return calls.get();
    } catch (SyscallException e) {
      throw storage(e);
    } catch (IllegalStateException e) {
      throw new StorageException(StorageException.Reason.INTERNAL, e.getMessage(), e);
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
