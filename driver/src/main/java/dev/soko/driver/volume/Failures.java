package dev.soko.driver.volume;

import dev.soko.driver.attribute.AttributeException;
import dev.soko.driver.btrfs.BtrfsException;
import dev.soko.driver.exec.ExecException;
import dev.soko.driver.failure.TypedFailure;
import dev.soko.driver.mount.MountException;
import dev.soko.driver.pool.PoolException;
import java.util.function.Supplier;

/**
 * The one table from the lower layers' typed failures ({@link TypedFailure}, and the exec package's
 * {@link ExecException}) to CSI reasons. The pool, mount and exec packages say what happened in
 * their own terms and never pick a client code (as TopoLVM's lvmd types its errors and its service
 * maps them); this class decides what each means to a client. It is applied at the engine's edge
 * ({@link LocalVolumeManager}), so the {@link VolumeManager} contract stays "failures are
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
    if (failure instanceof PoolException pool) {
      return under(reason(pool.kind()), pool);
    }
    if (failure instanceof MountException mount) {
      return under(reason(mount.kind()), mount);
    }
    if (failure instanceof BtrfsException btrfs) {
      return under(reason(btrfs.kind()), btrfs);
    }
    if (failure instanceof AttributeException attribute) {
      return under(reason(attribute.kind()), attribute);
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

  static StorageException.Reason reason(PoolException.Kind kind) {
    return switch (kind) {
      case BAD_INPUT -> StorageException.Reason.INVALID_ARGUMENT;
      case SIZE_OUT_OF_RANGE -> StorageException.Reason.OUT_OF_RANGE;
      case NO_SPACE -> StorageException.Reason.RESOURCE_EXHAUSTED;
      case UNUSABLE -> StorageException.Reason.UNAVAILABLE;
      // The records and the disk disagree: the spec's answer for a missing source or image.
      case IMAGE_MISSING -> StorageException.Reason.FAILED_PRECONDITION;
    };
  }

  static StorageException.Reason reason(MountException.Kind kind) {
    return switch (kind) {
      case REFUSED_INPUT -> StorageException.Reason.INVALID_ARGUMENT;
      // The host's setup (capabilities, a sandbox) is the caller's to fix, not a driver fault.
      case NOT_PERMITTED -> StorageException.Reason.FAILED_PRECONDITION;
      // Another holder still has a device: the same call succeeds once it lets go (the kubelet
      // retries an unstage), and until then the volume is in use.
      case BUSY -> StorageException.Reason.UNAVAILABLE;
      case FAILED -> StorageException.Reason.INTERNAL;
    };
  }

  static StorageException.Reason reason(BtrfsException.Kind kind) {
    return switch (kind) {
      // As a missing image: the records and the disk disagree.
      case SUBVOLUME_MISSING -> StorageException.Reason.FAILED_PRECONDITION;
      case NO_SPACE -> StorageException.Reason.RESOURCE_EXHAUSTED;
      case FAILED -> StorageException.Reason.INTERNAL;
    };
  }

  static StorageException.Reason reason(AttributeException.Kind kind) {
    return switch (kind) {
      case REFUSED -> StorageException.Reason.INVALID_ARGUMENT;
      case NOT_READY -> StorageException.Reason.FAILED_PRECONDITION;
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
