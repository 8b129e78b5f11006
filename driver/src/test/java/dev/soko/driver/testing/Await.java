package dev.soko.driver.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Polls a condition until it holds; fails the test, naming what it waited for, past a bound. */
public final class Await {
  private static final long PERIOD_MILLIS = 50;

  private Await() {}

  public static void until(String what, Duration bound, BooleanSupplier condition)
      throws InterruptedException {
    long deadline = System.nanoTime() + bound.toNanos();
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as("%s within %s", what, bound).isLessThan(deadline);
      Thread.sleep(PERIOD_MILLIS);
    }
  }
}
