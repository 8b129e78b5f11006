package dev.soko.driver.server;

import dev.soko.driver.metrics.RpcMetrics;
import io.grpc.ForwardingServerCall;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Wraps every call: turns exceptions thrown by a service into statuses (through {@link
 * StatusMapper}), logs the method, duration and code (debug when OK, warn otherwise) and records
 * metrics. Requests and responses are never logged: they carry secrets and volume_context.
 */
public final class RpcInterceptor implements ServerInterceptor {
  private static final Logger LOG = LoggerFactory.getLogger("dev.soko.driver.rpc");

  private final RpcMetrics metrics;

  public RpcInterceptor(RpcMetrics metrics) {
    this.metrics = metrics;
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    String method = call.getMethodDescriptor().getBareMethodName();
    String service = call.getMethodDescriptor().getServiceName();
    ObservedCall<Q, R> observed = new ObservedCall<>(call, service, method, System.nanoTime());
    ServerCall.Listener<Q> delegate;
    try {
      delegate = next.startCall(observed, headers);
    } catch (RuntimeException e) {
      observed.fail(e);
      return new ServerCall.Listener<>() {};
    }
    return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(delegate) {
      @Override
      public void onMessage(Q message) {
        try {
          super.onMessage(message);
        } catch (RuntimeException e) {
          observed.fail(e);
        }
      }

      @Override
      public void onHalfClose() {
        // Unary service methods run here; an exception they throw ends up in this catch.
        try {
          super.onHalfClose();
        } catch (RuntimeException e) {
          observed.fail(e);
        }
      }
    };
  }

  private final class ObservedCall<Q, R>
      extends ForwardingServerCall.SimpleForwardingServerCall<Q, R> {
    private final String service;
    private final String method;
    private final long startNanos;
    private boolean closed;

    ObservedCall(ServerCall<Q, R> call, String service, String method, long startNanos) {
      super(call);
      this.service = service;
      this.method = method;
      this.startNanos = startNanos;
    }

    void fail(RuntimeException failure) {
      if (StatusMapper.isUnexpected(failure)) {
        LOG.error("{}.{} failed unexpectedly", service, method, failure);
      }
      if (!closed) {
        close(StatusMapper.toStatus(failure), new Metadata());
      }
    }

    @Override
    public void close(Status status, Metadata trailers) {
      closed = true;
      long nanos = System.nanoTime() - startNanos;
      String code = status.getCode().name();
      metrics.record(method, code, nanos);
      if (status.isOk()) {
        if (LOG.isDebugEnabled()) {
          LOG.atDebug()
              .addKeyValue("method", method)
              .addKeyValue("code", code)
              .addKeyValue("duration_ms", millis(nanos))
              .log("rpc");
        }
      } else {
        LOG.atWarn()
            .addKeyValue("method", method)
            .addKeyValue("code", code)
            .addKeyValue("duration_ms", millis(nanos))
            .addKeyValue("error", status.getDescription())
            .log("rpc failed");
      }
      super.close(status, trailers);
    }

    private static String millis(long nanos) {
      return String.format(java.util.Locale.ROOT, "%.3f", nanos / 1e6);
    }
  }
}
