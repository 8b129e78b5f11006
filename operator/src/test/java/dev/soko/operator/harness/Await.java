package dev.soko.operator.harness;

import java.time.Duration;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Polls until a condition holds, then returns the last value; fails naming what it waited for, with
 * the last value and the last error. A probe or a condition that throws means "not yet" (the object
 * does not exist, the pod has no container yet, the API server is restarting, ...).
 */
public final class Await {
  private static final Duration TIMEOUT = Duration.ofSeconds(30);
  private static final Duration PERIOD = Duration.ofMillis(200);

  private Await() {}

  /** {@link #until(String, Duration, Supplier, Predicate)} for at most 30 s. */
  public static <T> T until(String what, Supplier<T> probe, Predicate<T> done) {
    return until(what, TIMEOUT, PERIOD, probe, done);
  }

  /** Probes every 200 ms for at most {@code timeout}. */
  public static <T> T until(String what, Duration timeout, Supplier<T> probe, Predicate<T> done) {
    return until(what, timeout, PERIOD, probe, done);
  }

  /** Probes every {@code period}, for a test that measures how soon something happens. */
  public static <T> T until(
      String what, Duration timeout, Duration period, Supplier<T> probe, Predicate<T> done) {
    long deadline = System.nanoTime() + timeout.toNanos();
    T last = null;
    Throwable lastError = null;
    while (true) {
      try {
        last = probe.get();
        if (done.test(last)) {
          return last;
        }
      } catch (RuntimeException | AssertionError e) {
        lastError = e;
      }
      if (System.nanoTime() > deadline) {
        AssertionError timedOut =
            new AssertionError(
                "timed out after "
                    + timeout.toSeconds()
                    + " s waiting for "
                    + what
                    + "; last value: "
                    + last
                    + (lastError == null ? "" : "; last error: " + lastError));
        if (lastError != null) {
          timedOut.initCause(lastError);
        }
        throw timedOut;
      }
      try {
        Thread.sleep(period.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted waiting for " + what, e);
      }
    }
  }
}
