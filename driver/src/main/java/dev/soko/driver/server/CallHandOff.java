package dev.soko.driver.server;

import io.grpc.Context;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import java.util.Arrays;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hands each call to the call executor once, when its request is complete. Given an executor, gRPC
 * runs a call's method lookup, its message and its half-close as separate tasks on it: three thread
 * hand-offs per unary call, each a futex wake-up and a context switch, measured at about a third of
 * the driver's CPU time per CreateVolume+DeleteVolume pair. The server therefore runs with a direct
 * executor, so those steps run on the I/O thread, where they are short (decoding a request of a few
 * hundred bytes), and this interceptor, the outermost one, moves the call to the executor at {@code
 * onHalfClose}: where a method whose client sends one message (every CSI method) runs its code.
 * Every later callback of the call follows it there, one at a time and in order, as gRPC's listener
 * contract asks.
 *
 * <p>Services whose clients stream (none here) would run their code on the I/O thread, so {@link
 * #intercept} refuses them.
 */
final class CallHandOff implements ServerInterceptor {
  private static final Logger LOG = LoggerFactory.getLogger(CallHandOff.class);

  private final Executor executor;

  CallHandOff(Executor executor) {
    this.executor = executor;
  }

  /** The service behind {@code inner} (the error boundary), with this hand-off outermost. */
  ServerServiceDefinition intercept(ServerServiceDefinition service, ServerInterceptor... inner) {
    for (ServerMethodDefinition<?, ?> method : service.getMethods()) {
      MethodDescriptor.MethodType type = method.getMethodDescriptor().getType();
      if (!type.clientSendsOneMessage()) {
        throw new IllegalArgumentException(
            method.getMethodDescriptor().getFullMethodName()
                + " is "
                + type
                + ": its code would run on the I/O thread");
      }
    }
    ServerInterceptor[] chain = Arrays.copyOf(inner, inner.length + 1);
    chain[inner.length] = this; // the last one listed sees each call first
    return ServerInterceptors.intercept(service, chain);
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    return new HandedOff<>(next.startCall(call, headers), call, executor);
  }

  /**
   * Delivers callbacks on the I/O thread until the half-close, then on the executor. Callbacks come
   * from the transport one at a time, so {@link #tasks} needs no lock to be set.
   */
  private static final class HandedOff<Q, R>
      extends ForwardingServerCallListener.SimpleForwardingServerCallListener<Q> {
    private final ServerCall<Q, R> call;
    private final Executor executor;
    private SerialTasks tasks;

    HandedOff(ServerCall.Listener<Q> delegate, ServerCall<Q, R> call, Executor executor) {
      super(delegate);
      this.call = call;
      this.executor = executor;
    }

    @Override
    public void onHalfClose() {
      tasks = new SerialTasks(executor);
      try {
        tasks.submit(Context.current().wrap(super::onHalfClose), false);
      } catch (RejectedExecutionException e) {
        // The method never ran; say so with a code a sidecar retries (RESOURCE_EXHAUSTED would
        // mean "no capacity on this node" to the external-provisioner).
        LOG.warn("{} refused: {}", call.getMethodDescriptor().getBareMethodName(), e.getMessage());
        call.close(Status.UNAVAILABLE.withDescription(e.getMessage()), new Metadata());
      }
    }

    @Override
    public void onMessage(Q message) {
      deliver(() -> super.onMessage(message));
    }

    @Override
    public void onCancel() {
      deliver(super::onCancel);
    }

    @Override
    public void onComplete() {
      deliver(super::onComplete);
    }

    @Override
    public void onReady() {
      deliver(super::onReady);
    }

    /**
     * Before the half-close, on this (the I/O) thread. After it, behind the call's code; once that
     * has finished, here again: what follows it only tells the listener that the call is over or
     * writable (no CSI service acts on that), and a second hand-off would cost a thread wake-up per
     * call for nothing.
     */
    private void deliver(Runnable callback) {
      if (tasks == null) {
        callback.run();
      } else {
        tasks.submit(Context.current().wrap(callback), true);
      }
    }
  }

  /**
   * One call's tasks, run one at a time in the order they were submitted: on the executor, or on
   * the submitting thread when it may and no task of the call is queued or running.
   */
  private static final class SerialTasks implements Runnable {
    private final Executor executor;
    private final Queue<Runnable> queue = new ConcurrentLinkedQueue<>();

    /** Set while a thread runs (or is about to run) the queue; whoever sets it drains it. */
    private final AtomicBoolean draining = new AtomicBoolean();

    SerialTasks(Executor executor) {
      this.executor = executor;
    }

    /**
     * Queues a task. If no thread drains the queue, this one either drains it here ({@code
     * runsHereWhenIdle}) or schedules the drain on the executor, whose refusal (its queue is full)
     * it throws.
     */
    void submit(Runnable task, boolean runsHereWhenIdle) {
      queue.add(task);
      if (!draining.compareAndSet(false, true)) {
        return; // the thread draining takes it
      }
      if (runsHereWhenIdle) {
        run();
        return;
      }
      try {
        executor.execute(this);
      } catch (RejectedExecutionException e) {
        queue.remove(task);
        draining.set(false);
        throw e;
      }
    }

    @Override
    public void run() {
      do {
        try {
          for (Runnable task = queue.poll(); task != null; task = queue.poll()) {
            task.run();
          }
        } finally {
          draining.set(false);
        }
        // A task queued between the last poll and the reset saw the queue drained: take it.
      } while (!queue.isEmpty() && draining.compareAndSet(false, true));
    }
  }
}
