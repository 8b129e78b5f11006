package dev.soko.driver.transfer;

import io.grpc.Context;
import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * A deadline on progress rather than on the whole: a copy of any size may take as long as it needs
 * while data keeps arriving, and one whose source stops sending for {@code stall} is cancelled (a
 * node that hangs, a network that drops packets without resetting the connection).
 */
final class ProgressWatch implements AutoCloseable {
  private final Context.CancellableContext call;
  private final long stallNanos;
  private final LongSupplier nanoTime;
  private volatile long last;
  private volatile boolean stalled;
  private ScheduledFuture<?> checks;

  ProgressWatch(Context.CancellableContext call, Duration stall, LongSupplier nanoTime) {
    this.call = call;
    this.stallNanos = stall.toNanos();
    this.nanoTime = nanoTime;
    this.last = nanoTime.getAsLong();
  }

  /** Checks four times per stall period on {@code timer}. */
  ProgressWatch start(ScheduledExecutorService timer) {
    long every = Math.max(1, stallNanos / 4);
    checks = timer.scheduleWithFixedDelay(this::check, every, every, TimeUnit.NANOSECONDS);
    return this;
  }

  /** Data arrived. */
  void progress() {
    last = nanoTime.getAsLong();
  }

  /** Cancels the call when nothing arrived for the stall period. */
  void check() {
    if (!stalled && nanoTime.getAsLong() - last > stallNanos) {
      stalled = true;
      call.cancel(null);
    }
  }

  /** Whether the call was cancelled for want of progress. */
  boolean stalled() {
    return stalled;
  }

  @Override
  public void close() {
    if (checks != null) {
      checks.cancel(false);
    }
  }
}
