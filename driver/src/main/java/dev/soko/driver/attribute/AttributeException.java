package dev.soko.driver.attribute;

import dev.soko.driver.failure.FailureReason;
import dev.soko.driver.failure.TypedFailure;

/**
 * An attribute refused or not applicable, in the attribute's terms; {@code volume/Failures} gives
 * each kind its CSI code. The message names the key and says what is wrong, never a secret value.
 */
public final class AttributeException extends TypedFailure {
  public enum Kind {
    /** The caller's values are wrong (unknown key, bad value, not possible on this volume). */
    REFUSED,
    /** The values are right but the node is not ready to apply them yet (a missing secret). */
    NOT_READY
  }

  public AttributeException(Kind kind, String message) {
    super(kind, message, null);
  }

  public static AttributeException refused(String format, Object... args) {
    return new AttributeException(Kind.REFUSED, String.format(format, args));
  }

  @Override
  public Kind kind() {
    return (Kind) super.kind();
  }

  @Override
  public FailureReason reason() {
    return switch (kind()) {
      case REFUSED -> FailureReason.BAD_INPUT;
      case NOT_READY -> FailureReason.PRECONDITION;
    };
  }
}
