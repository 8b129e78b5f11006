package dev.soko.driver.handoff;

import dev.soko.driver.volume.StorageException;
import java.util.Map;

/**
 * Carries out a request on the node. It must be idempotent (a request is handed over again when its
 * status could not be written) and durable: once it answers {@link Outcome#applied}, the change
 * survives a restart of the driver, because the request is never handed over again.
 */
@FunctionalInterface
public interface NodeRequestHandler {
  Outcome handle(NodeRequest request);

  /**
   * What became of a request: its status phase, unless applied why, and what an applied request
   * answers (status fields by name, e.g. {@code snapshot}; empty for ModifyVolume).
   */
  record Outcome(String phase, String message, Map<String, Object> result) {
    public Outcome {
      result = Map.copyOf(result);
    }

    Outcome(String phase, String message) {
      this(phase, message, Map.of());
    }

    public static Outcome applied() {
      return new Outcome(NodeRequests.APPLIED, null);
    }

    /** Applied, answering {@code field} of the status with {@code value}. */
    public static Outcome applied(String field, Object value) {
      return new Outcome(NodeRequests.APPLIED, null, Map.of(field, value));
    }

    /** The node will not do it; the controller's call fails with INVALID_ARGUMENT. */
    public static Outcome refused(String why) {
      return new Outcome(NodeRequests.REFUSED, why);
    }

    /** The node will not do it; the controller's call fails with {@code reason}'s code. */
    public static Outcome refused(StorageException.Reason reason, String why) {
      return new Outcome(NodeRequests.REFUSED, why, Map.of(NodeRequests.REASON, reason.name()));
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
