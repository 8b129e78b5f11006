package dev.soko.driver.transfer;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptors;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A channel that runs {@code hook} on the caller's side when the {@code at}-th message of a call
 * arrives, before the caller sees it: a test's way to act (stop a server, delete a snapshot) at a
 * known point of a stream.
 */
final class HookedChannel extends ManagedChannel {
  private final ManagedChannel delegate;
  private final int at;
  private final Runnable hook;

  HookedChannel(ManagedChannel delegate, int at, Runnable hook) {
    this.delegate = delegate;
    this.at = at;
    this.hook = hook;
  }

  @Override
  public <Q, R> ClientCall<Q, R> newCall(MethodDescriptor<Q, R> method, CallOptions options) {
    AtomicInteger received = new AtomicInteger();
    return ClientInterceptors.intercept(
            delegate,
            new io.grpc.ClientInterceptor() {
              @Override
              public <A, B> ClientCall<A, B> interceptCall(
                  MethodDescriptor<A, B> m, CallOptions o, io.grpc.Channel next) {
                return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(m, o)) {
                  @Override
                  public void start(Listener<B> listener, Metadata headers) {
                    super.start(
                        new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(
                            listener) {
                          @Override
                          public void onMessage(B message) {
                            if (received.incrementAndGet() == at) {
                              hook.run();
                            }
                            super.onMessage(message);
                          }
                        },
                        headers);
                  }
                };
              }
            })
        .newCall(method, options);
  }

  @Override
  public String authority() {
    return delegate.authority();
  }

  @Override
  public ManagedChannel shutdown() {
    return delegate.shutdown();
  }

  @Override
  public boolean isShutdown() {
    return delegate.isShutdown();
  }

  @Override
  public boolean isTerminated() {
    return delegate.isTerminated();
  }

  @Override
  public ManagedChannel shutdownNow() {
    return delegate.shutdownNow();
  }

  @Override
  public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    return delegate.awaitTermination(timeout, unit);
  }
}
