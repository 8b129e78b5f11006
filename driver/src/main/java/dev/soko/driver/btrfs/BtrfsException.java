package dev.soko.driver.btrfs;

import dev.soko.driver.failure.FailureReason;
import dev.soko.driver.failure.TypedFailure;

/** A btrfs failure, typed where it happens. */
public class BtrfsException extends TypedFailure {

  /** What kind of failure, as far as a caller can act on it. */
  public enum Kind {
    /** A subvolume the records name is not there (a crash or an admin removed it). */
    SUBVOLUME_MISSING,
    /** The filesystem is full, or a qgroup above the pool's is (ENOSPC, EDQUOT). */
    NO_SPACE,
    /** The btrfs tool or the kernel failed. */
    FAILED
  }

  public BtrfsException(Kind kind, String message, Throwable cause) {
    super(kind, message, cause);
  }

  @Override
  public Kind kind() {
    return (Kind) super.kind(); // the constructor takes only a Kind
  }

  static BtrfsException of(Kind kind, String format, Object... args) {
    return new BtrfsException(kind, String.format(format, args), null);
  }

  @Override
  public FailureReason reason() {
    return switch (kind()) {
      // As a missing image: the records and the disk disagree.
      case SUBVOLUME_MISSING -> FailureReason.PRECONDITION;
      case NO_SPACE -> FailureReason.NO_SPACE;
      case FAILED -> FailureReason.INTERNAL;
    };
  }
}
