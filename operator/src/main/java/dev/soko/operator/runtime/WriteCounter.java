package dev.soko.operator.runtime;

import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Counts write calls (anything but GET) the operator's client sends to the API server; exported as
 * a metric and used by tests to prove that a no-op resync writes nothing.
 */
public final class WriteCounter implements Interceptor {
  private final AtomicLong writes = new AtomicLong();

  @Override
  public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
    if (!"GET".equals(request.method())) {
      writes.incrementAndGet();
    }
  }

  public long writes() {
    return writes.get();
  }
}
