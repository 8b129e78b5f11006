package dev.soko.e2e;

import java.time.Duration;
import java.util.function.Predicate;
import java.util.function.Supplier;

/** Polls until a condition holds, then returns the last value; fails naming what it waited for. */
final class Await {
  private Await() {}

  static <T> T until(String what, Duration timeout, Supplier<T> probe, Predicate<T> done) {
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
        // Not there yet (the object does not exist, the pod has no container yet, exec is not
        // answered yet, ...).
        lastError = e;
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError(
            "timed out after "
                + timeout.toSeconds()
                + " s waiting for "
                + what
                + "; last value: "
                + last
                + (lastError == null ? "" : "; last error: " + lastError));
      }
      try {
        Thread.sleep(250);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted waiting for " + what);
      }
    }
  }
}
