package dev.soko.driver.mount;

import dev.soko.driver.failure.FailureReason;
import dev.soko.driver.failure.TypedFailure;

/** A mount, filesystem, loop-device or path failure, typed where it happens. */
public class MountException extends TypedFailure {

  /** What kind of failure, as far as a caller can act on it. */
  public enum Kind {
    /** A path, option or device name from a request that the policy refuses. */
    REFUSED_INPUT,
    /** The host or the driver's privileges do not allow the operation; not a driver fault. */
    NOT_PERMITTED,
    /**
     * The kernel has not finished with a device yet (another holder still has it open): the same
     * call can succeed later.
     */
    BUSY,
    /** The kernel or a tool failed. */
    FAILED
  }

  public MountException(Kind kind, String message, Throwable cause) {
    super(kind, message, cause);
  }

  @Override
  public Kind kind() {
    return (Kind) super.kind(); // the constructor takes only a Kind
  }

  static MountException refused(String format, Object... args) {
    return new MountException(Kind.REFUSED_INPUT, String.format(format, args), null);
  }

  static MountException notPermitted(String format, Object... args) {
    return new MountException(Kind.NOT_PERMITTED, String.format(format, args), null);
  }

  static MountException busy(String format, Object... args) {
    return new MountException(Kind.BUSY, String.format(format, args), null);
  }

  public static MountException failed(String message) {
    return new MountException(Kind.FAILED, message, null);
  }

  public static MountException failed(String message, Throwable cause) {
    return new MountException(Kind.FAILED, message, cause);
  }

  @Override
  public FailureReason reason() {
    return switch (kind()) {
      case REFUSED_INPUT -> FailureReason.BAD_INPUT;
      // The host's setup (capabilities, a sandbox) is the caller's to fix, not a driver fault.
      case NOT_PERMITTED -> FailureReason.PRECONDITION;
      // Another holder still has a device: the same call succeeds once it lets go (the kubelet
      // retries an unstage), and until then the volume is in use.
      case BUSY -> FailureReason.UNAVAILABLE;
      case FAILED -> FailureReason.INTERNAL;
    };
  }
}
