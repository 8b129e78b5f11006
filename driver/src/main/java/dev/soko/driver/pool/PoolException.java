package dev.soko.driver.pool;

import dev.soko.driver.failure.FailureReason;
import dev.soko.driver.failure.TypedFailure;

/** A pool failure, typed where it happens. */
public class PoolException extends TypedFailure {

  /** What kind of failure, as far as a caller can act on it. */
  public enum Kind {
    /** A request value (an ID, a capacity range) that is malformed. */
    BAD_INPUT,
    /** A well-formed size that no volume of this kind can have. */
    SIZE_OUT_OF_RANGE,
    /** The pool has no room (logical or physical) for what is asked. */
    NO_SPACE,
    /** The pool directory cannot be used or read (missing, unmounted, the disk gone). */
    UNUSABLE,
    /** Storage (an image, a subvolume) that the records say exists is not on disk. */
    STORAGE_MISSING
  }

  public PoolException(Kind kind, String message, Throwable cause) {
    super(kind, message, cause);
  }

  @Override
  public Kind kind() {
    return (Kind) super.kind(); // the constructor takes only a Kind
  }

  static PoolException of(Kind kind, String format, Object... args) {
    return new PoolException(kind, String.format(format, args), null);
  }

  @Override
  public FailureReason reason() {
    return switch (kind()) {
      case BAD_INPUT -> FailureReason.BAD_INPUT;
      case SIZE_OUT_OF_RANGE -> FailureReason.OUT_OF_RANGE;
      case NO_SPACE -> FailureReason.NO_SPACE;
      case UNUSABLE -> FailureReason.UNAVAILABLE;
      // The records and the disk disagree: the spec's answer for a missing source or image.
      case STORAGE_MISSING -> FailureReason.PRECONDITION;
    };
  }
}
