package dev.soko.driver.failure;

/**
 * A failure typed where it happens (as TopoLVM types its lvm errors): its kind names the situation
 * in the terms of the package that throws it, never a CSI code, and its {@link #reason()} says what
 * a caller can do about it; which code a client sees is decided once, above ({@code
 * volume/Failures}), from that reason alone. Each package keeps its own subclass and its own enum
 * of kinds, so that the mapping tells them apart and its switches stay exhaustive. A leaf package,
 * so that the lower layers share this without importing each other.
 */
public abstract class TypedFailure extends RuntimeException {
  // Java allows no generic Throwable: each subclass narrows kind() to its own enum.
  private final Enum<?> kind;

  protected TypedFailure(Enum<?> kind, String message, Throwable cause) {
    super(message, cause);
    this.kind = kind;
  }

  /** What kind of failure, as far as a caller can act on it. */
  public Enum<?> kind() {
    return kind;
  }

  /** What a caller can do about it: each package decides for its own kinds. */
  public abstract FailureReason reason();
}
