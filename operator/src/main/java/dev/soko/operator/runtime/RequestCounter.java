package dev.soko.operator.runtime;

import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Counts the calls the operator's client sends to the API server, leader-election Leases and the
 * informers' watch calls excepted: all of them, and the writes (anything but GET) among them.
 * Exported as metrics; tests use them to prove that a no-op reconcile makes at most a handful of
 * requests and no write.
 */
public final class RequestCounter implements Interceptor {
  private static final Logger LOG = LoggerFactory.getLogger(RequestCounter.class);
  private final AtomicLong requests = new AtomicLong();
  private final AtomicLong writes = new AtomicLong();

  @Override
  public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
    String path = request.uri().getPath();
    String query = request.uri().getRawQuery();
    // Leader-election renewals write a Lease every few seconds whatever the reconciler does; a
    // watch is the informers' standing connection, not work done by a reconcile.
    if (path.startsWith("/apis/coordination.k8s.io/")
        || query != null && query.contains("watch=true")) {
      return;
    }
    requests.incrementAndGet();
    boolean write = !"GET".equals(request.method());
    if (write) {
      writes.incrementAndGet();
    }
    LOG.debug("{} call {} {}", write ? "write" : "read", request.method(), path);
  }

  /** Requests (reads and writes) since start. */
  public long requests() {
    return requests.get();
  }

  /** Write requests since start. */
  public long writes() {
    return writes.get();
  }
}
