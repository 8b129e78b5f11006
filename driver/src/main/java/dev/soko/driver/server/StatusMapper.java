package dev.soko.driver.server;

import dev.soko.driver.volume.Failures;
import dev.soko.driver.volume.StorageException;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;

/**
 * The one place where failures become gRPC statuses. A {@link StorageException} (or a lower layer's
 * typed failure, which {@link Failures} gives its reason) keeps its message (written for the
 * client) under the code its reason names; a status the code raised on purpose passes through;
 * anything else is a bug and becomes INTERNAL with a generic message, so that no stack trace or
 * host detail reaches a client and no client ever sees UNKNOWN.
 */
public final class StatusMapper {
  static final String GENERIC_INTERNAL = "internal error in the Soko driver; see the driver log";

  private StatusMapper() {}

  public static Status toStatus(Throwable failure) {
    StorageException storage = Failures.asStorage(failure);
    if (storage != null) {
      return code(storage.reason()).withDescription(storage.getMessage());
    }
    if (failure instanceof StatusRuntimeException e) {
      return known(e.getStatus());
    }
    if (failure instanceof StatusException e) {
      return known(e.getStatus());
    }
    return Status.INTERNAL.withDescription(GENERIC_INTERNAL);
  }

  /** True when the failure is a bug worth a stack trace in the log, not an expected answer. */
  static boolean isUnexpected(Throwable failure) {
    return !(Failures.asStorage(failure) != null
        || failure instanceof StatusRuntimeException
        || failure instanceof StatusException);
  }

  static Status code(StorageException.Reason reason) {
    return switch (reason) {
      case INVALID_ARGUMENT -> Status.INVALID_ARGUMENT;
      case NOT_FOUND -> Status.NOT_FOUND;
      case ALREADY_EXISTS -> Status.ALREADY_EXISTS;
      case OUT_OF_RANGE -> Status.OUT_OF_RANGE;
      case RESOURCE_EXHAUSTED -> Status.RESOURCE_EXHAUSTED;
      case FAILED_PRECONDITION -> Status.FAILED_PRECONDITION;
      case ABORTED -> Status.ABORTED;
      case UNAVAILABLE -> Status.UNAVAILABLE;
      case INTERNAL -> Status.INTERNAL;
    };
  }

  private static Status known(Status status) {
    return status.getCode() == Status.Code.UNKNOWN
        ? Status.INTERNAL.withDescription(GENERIC_INTERNAL)
        : status.withCause(null);
  }
}
