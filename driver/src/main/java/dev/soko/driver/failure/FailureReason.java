package dev.soko.driver.failure;

/**
 * What a caller can do about a {@link TypedFailure}, in terms no lower package has to learn from
 * CSI: each failure says its own, and {@code volume/Failures} turns it into a client's code in one
 * switch, without knowing the package that threw it.
 */
public enum FailureReason {
  /** The request is wrong: the same request cannot succeed. */
  BAD_INPUT,
  /** A well-formed size that cannot be served. */
  OUT_OF_RANGE,
  /** No room for what is asked. */
  NO_SPACE,
  /**
   * Something the call needs is not so (the records and the disk disagree, the host's setup, a
   * secret): the call can succeed once that is put right, not by retrying alone.
   */
  PRECONDITION,
  /** Busy or gone for now: the same call may succeed later. */
  UNAVAILABLE,
  /** A fault of the driver or of a program it ran. */
  INTERNAL
}
