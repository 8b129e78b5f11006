package dev.soko.operator.runtime;

import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Counts write calls (anything but GET, leader-election Leases excepted) the operator's client
 * sends to the API server; exported as a metric and used by tests to prove that a no-op resync
 * writes nothing.
 */
public final class WriteCounter implements Interceptor {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(WriteCounter.class);
  private final AtomicLong writes = new AtomicLong();

  @Override
  public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
    // Leader-election renewals write a Lease every few seconds whatever the reconciler does.
    boolean lease = request.uri().getPath().startsWith("/apis/coordination.k8s.io/");
    if (!"GET".equals(request.method()) && !lease) {
      writes.incrementAndGet();
      LOG.debug("write call {} {}", request.method(), request.uri().getPath());
    }
  }

  public long writes() {
    return writes.get();
  }
}
