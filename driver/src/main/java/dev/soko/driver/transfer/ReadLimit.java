package dev.soko.driver.transfer;

import io.grpc.ForwardingServerCall;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.util.Set;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Bounds the streams the data port serves at once: each holds a file open, reads the pool's disk
 * and fills the node's network at the reader's pace, so a node asked to copy for many restores at
 * once would starve its own workloads and every copy alike. A call beyond the limit is refused at
 * once with RESOURCE_EXHAUSTED rather than held: a waiting call would hold the caller's
 * CreateVolume with no end the caller can see (its copy's stall watch would cut it after a minute
 * anyway), while a refusal reaches the provisioner as a failed CreateVolume that it retries with
 * its backoff. A slot is taken before the call starts (before a volume's read copy is made) and
 * given back once, however the call ends: completed, failed or cancelled.
 */
final class ReadLimit implements ServerInterceptor {
  private final Set<String> limitedMethods;
  private final Semaphore slots;
  private final int max;
  private final String node;

  /**
   * @param limitedMethods the full names of the methods that count
   * @param max the most such calls at once, at least 1
   * @param node this node's name, for the refusal's message
   */
  ReadLimit(Set<String> limitedMethods, int max, String node) {
    if (max < 1) {
      throw new IllegalArgumentException("a read limit is at least 1, got " + max);
    }
    this.limitedMethods = Set.copyOf(limitedMethods);
    this.slots = new Semaphore(max);
    this.max = max;
    this.node = node;
  }

  /** How many slots are free: the limit less the streams served now. */
  int free() {
    return slots.availablePermits();
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    if (!limitedMethods.contains(call.getMethodDescriptor().getFullMethodName())) {
      return next.startCall(call, headers);
    }
    if (!slots.tryAcquire()) {
      throw Status.RESOURCE_EXHAUSTED
          .withDescription(
              "node "
                  + node
                  + " is serving "
                  + max
                  + " reads of its data at once, its limit (--data-max-reads); try again when"
                  + " one ends")
          .asRuntimeException();
    }
    AtomicBoolean held = new AtomicBoolean(true);
    Runnable release =
        () -> {
          if (held.compareAndSet(true, false)) {
            slots.release();
          }
        };
    ServerCall<Q, R> releasing =
        new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
          @Override
          public void close(Status status, Metadata trailers) {
            try {
              super.close(status, trailers);
            } finally {
              release.run();
            }
          }
        };
    ServerCall.Listener<Q> listener;
    try {
      listener = next.startCall(releasing, headers);
    } catch (RuntimeException e) {
      release.run();
      throw e;
    }
    return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(listener) {
      @Override
      public void onCancel() {
        try {
          super.onCancel();
        } finally {
          release.run();
        }
      }

      @Override
      public void onComplete() {
        try {
          super.onComplete();
        } finally {
          release.run();
        }
      }
    };
  }
}
