package dev.soko.driver.server;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The executor CSI calls run on: at most {@code maxThreads} calls at once, up to {@code maxQueued}
 * more wait, the rest are rejected. A plain fixed-size {@link ThreadPoolExecutor} starts a new
 * thread for every call until it holds its core size, even while its other threads idle, so a
 * driver that only ever saw one call at a time ended up with 16 threads (each one costs stack and
 * malloc memory). This one starts a thread only when every thread it has is busy, and threads idle
 * for {@code keepAlive} retire.
 */
final class CallExecutor extends ThreadPoolExecutor {
  /** Calls handed to {@link #execute} that have not finished yet (running or queued). */
  private final AtomicInteger inFlight = new AtomicInteger();

  CallExecutor(
      int maxThreads, int maxQueued, long keepAlive, TimeUnit unit, ThreadFactory threads) {
    super(0, maxThreads, keepAlive, unit, new GrowFirstQueue(maxQueued), threads);
    ((GrowFirstQueue) getQueue()).executor = this;
    setRejectedExecutionHandler(
        (call, executor) -> {
          // The pool reached its maximum between the queue's refusal and the new thread: queue.
          if (executor.isShutdown() || !((GrowFirstQueue) getQueue()).enqueue(call)) {
            throw new RejectedExecutionException(
                "more than " + maxQueued + " CSI calls are waiting; try again later");
          }
        });
  }

  @Override
  public void execute(Runnable call) {
    inFlight.incrementAndGet();
    try {
      super.execute(call);
    } catch (RejectedExecutionException e) {
      inFlight.decrementAndGet();
      throw e;
    }
  }

  @Override
  protected void afterExecute(Runnable call, Throwable failure) {
    inFlight.decrementAndGet();
  }

  /**
   * Refuses a call (so that the executor starts a thread for it) while more calls are in flight
   * than there are threads and the pool may still grow; otherwise queues it for an idle thread.
   */
  private static final class GrowFirstQueue extends LinkedBlockingQueue<Runnable> {
    private transient CallExecutor executor;

    GrowFirstQueue(int capacity) {
      super(capacity);
    }

    @Override
    public boolean offer(Runnable call) {
      int threads = executor.getPoolSize();
      if (threads < executor.getMaximumPoolSize() && executor.inFlight.get() > threads) {
        return false;
      }
      return super.offer(call);
    }

    boolean enqueue(Runnable call) {
      return super.offer(call);
    }
  }
}
