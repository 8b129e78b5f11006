package dev.soko.driver.pool;

import java.util.Objects;

/**
 * Whether this node uses a configured pool, and why not.
 *
 * @param reason empty when {@link State#READY}; else one sentence for logs, events and status
 */
public record PoolVerdict(State state, String reason) {

  /** What a pool is on this node. */
  public enum State {
    /** Checked and in use: advertised, takes new volumes. */
    READY,
    /** Configured for this node but failed a check; never created, offers nothing. */
    REFUSED,
    /** The pool's node selector does not match this node; never advertised or written. */
    NOT_SELECTED
  }

  public static final PoolVerdict READY = new PoolVerdict(State.READY, "");

  public PoolVerdict {
    Objects.requireNonNull(state);
    Objects.requireNonNull(reason);
  }

  public static PoolVerdict refused(String format, Object... args) {
    return new PoolVerdict(State.REFUSED, String.format(format, args));
  }

  public static PoolVerdict notSelected(String reason) {
    return new PoolVerdict(State.NOT_SELECTED, reason);
  }

  public boolean ready() {
    return state == State.READY;
  }
}
