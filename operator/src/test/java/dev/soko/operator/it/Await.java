package dev.soko.operator.it;

import java.time.Duration;
import java.util.function.Supplier;

/** Polls until a condition holds, then returns its last value; fails with a description. */
final class Await {
  private Await() {}

  static <T> T until(String what, Supplier<T> probe, java.util.function.Predicate<T> done) {
    return until(what, probe, done, Duration.ofSeconds(30));
  }

  static <T> T until(
      String what, Supplier<T> probe, java.util.function.Predicate<T> done, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    T last = null;
    while (System.nanoTime() < deadline) {
      try {
        last = probe.get();
        if (done.test(last)) {
          return last;
        }
      } catch (RuntimeException e) {
        // The object may not exist yet.
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted waiting for " + what);
      }
    }
    throw new AssertionError("timed out waiting for " + what + "; last value: " + last);
  }
}
