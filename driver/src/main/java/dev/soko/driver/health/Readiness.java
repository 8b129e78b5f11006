package dev.soko.driver.health;

import java.util.Optional;

/**
 * Whether the driver can serve, and if not, why. One answer for every asker: CSI Probe, the gRPC
 * health service and {@code /healthz} all call the same instance, so they cannot disagree.
 */
@FunctionalInterface
public interface Readiness {
  /** A process with nothing to open (controller mode) is ready as soon as it serves. */
  Readiness ALWAYS = Optional::empty;

  /** Empty when ready; otherwise what is missing, written for an operator reading a probe. */
  Optional<String> notReady();

  default boolean ready() {
    return notReady().isEmpty();
  }

  /** Ready when both are; otherwise this one's reason first. */
  default Readiness and(Readiness other) {
    return () -> notReady().or(other::notReady);
  }
}
