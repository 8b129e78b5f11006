package dev.soko.driver.volume;

import java.io.UncheckedIOException;

/**
 * The one exception type the storage layers throw. Its {@link Reason} says what kind of failure it
 * is; the gRPC layer maps reasons to status codes in exactly one place ({@code StatusMapper}), so a
 * backend never needs to know about gRPC and a client never sees {@code UNKNOWN}.
 */
public class StorageException extends RuntimeException {

  /** What went wrong, in the terms of the CSI spec's error table. */
  public enum Reason {
    INVALID_ARGUMENT,
    NOT_FOUND,
    ALREADY_EXISTS,
    OUT_OF_RANGE,
    RESOURCE_EXHAUSTED,
    FAILED_PRECONDITION,
    ABORTED,
    UNAVAILABLE,
    INTERNAL
  }

  private final Reason reason;

  public StorageException(Reason reason, String message) {
    super(message);
    this.reason = reason;
  }

  public StorageException(Reason reason, String message, Throwable cause) {
    super(message, cause);
    this.reason = reason;
  }

  public Reason reason() {
    return reason;
  }

  public static StorageException invalid(String format, Object... args) {
    return new StorageException(Reason.INVALID_ARGUMENT, String.format(format, args));
  }

  public static StorageException notFound(String format, Object... args) {
    return new StorageException(Reason.NOT_FOUND, String.format(format, args));
  }

  public static StorageException alreadyExists(String format, Object... args) {
    return new StorageException(Reason.ALREADY_EXISTS, String.format(format, args));
  }

  public static StorageException outOfRange(String format, Object... args) {
    return new StorageException(Reason.OUT_OF_RANGE, String.format(format, args));
  }

  public static StorageException exhausted(String format, Object... args) {
    return new StorageException(Reason.RESOURCE_EXHAUSTED, String.format(format, args));
  }

  public static StorageException precondition(String format, Object... args) {
    return new StorageException(Reason.FAILED_PRECONDITION, String.format(format, args));
  }

  public static StorageException internal(String message, Throwable cause) {
    return new StorageException(Reason.INTERNAL, message, cause);
  }

  /**
   * A failure while doing {@code what}: itself when it is a StorageException already, else INTERNAL
   * with {@code what} and the failure's message (an IO failure's cause).
   */
  static StorageException wrap(String what, RuntimeException e) {
    if (e instanceof StorageException se) {
      return se;
    }
    if (e instanceof UncheckedIOException io) {
      return StorageException.internal(what + ": " + io.getCause().getMessage(), io);
    }
    return StorageException.internal(what + ": " + e, e);
  }
}
