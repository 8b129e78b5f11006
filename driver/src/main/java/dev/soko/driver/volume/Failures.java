package dev.soko.driver.volume;

import dev.soko.driver.exec.ExecException;
import dev.soko.driver.failure.FailureReason;
import dev.soko.driver.failure.TypedFailure;
import java.util.function.Supplier;

/**
 * The one table from the lower layers' typed failures ({@link TypedFailure}, and the exec package's
 * {@link ExecException}) to CSI reasons. The lower packages say what happened in their own terms
 * and what a caller can do about it ({@link FailureReason}), never a client code (as TopoLVM's lvmd
 * types its errors and its service maps them); this class decides what each reason means to a
 * client, without naming the package that threw it. It is applied at the engine's edge ({@link
 * LocalVolumeManager}), so the {@link VolumeManager} contract stays "failures are
 * StorageExceptions", and by {@code server/StatusMapper} for the few lower calls the services make
 * themselves (path checks).
 */
public final class Failures {
  private Failures() {}

  /**
   * The failure as a {@link StorageException}: itself, a typed lower-layer failure under its reason
   * (message and cause kept), or null for anything else (a bug, left for the caller).
   */
  public static StorageException asStorage(Throwable failure) {
    if (failure instanceof StorageException storage) {
      return storage;
    }
    if (failure instanceof TypedFailure typed) {
      return under(reason(typed.reason()), typed);
    }
    if (failure instanceof ExecException exec) {
      // A program that failed, hung or could not start is the driver's problem, never the client's.
      return under(StorageException.Reason.INTERNAL, exec);
    }
    return null;
  }

  private static StorageException under(StorageException.Reason reason, RuntimeException failure) {
    return new StorageException(reason, failure.getMessage(), failure);
  }

  static StorageException.Reason reason(FailureReason reason) {
    return switch (reason) {
      case BAD_INPUT -> StorageException.Reason.INVALID_ARGUMENT;
      case OUT_OF_RANGE -> StorageException.Reason.OUT_OF_RANGE;
      case NO_SPACE -> StorageException.Reason.RESOURCE_EXHAUSTED;
      case PRECONDITION -> StorageException.Reason.FAILED_PRECONDITION;
      case UNAVAILABLE -> StorageException.Reason.UNAVAILABLE;
      case INTERNAL -> StorageException.Reason.INTERNAL;
    };
  }

  /** Runs one engine operation, reporting a typed lower-layer failure as a StorageException. */
  static <T> T mapped(Supplier<T> operation) {
    try {
      return operation.get();
    } catch (RuntimeException e) {
      StorageException storage = asStorage(e);
      throw storage != null ? storage : e;
    }
  }

  static void mapped(Runnable operation) {
    mapped(
        () -> {
          operation.run();
          return null;
        });
  }
}
