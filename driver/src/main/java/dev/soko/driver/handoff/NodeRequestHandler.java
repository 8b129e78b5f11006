package dev.soko.driver.handoff;

/**
 * Carries out a request on the node. It must be idempotent (a request is handed over again when its
 * status could not be written) and durable: once it answers {@link Outcome#applied}, the change
 * survives a restart of the driver, because the request is never handed over again.
 */
@FunctionalInterface
public interface NodeRequestHandler {
  Outcome handle(NodeRequest request);

  /** What became of a request: its status phase and, unless applied, why. */
  record Outcome(String phase, String message) {
    public static Outcome applied() {
      return new Outcome(NodeRequests.APPLIED, null);
    }

    /** The node will not do it; the controller's call fails with INVALID_ARGUMENT. */
    public static Outcome refused(String why) {
      return new Outcome(NodeRequests.REFUSED, why);
    }

    /** The node could not do it now and tries again; the controller's call stays retryable. */
    public static Outcome failed(String why) {
      return new Outcome(NodeRequests.FAILED, why);
    }

    boolean isFailed() {
      return NodeRequests.FAILED.equals(phase);
    }
  }
}
