package dev.soko.operator.reconcile.observe;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

class DiscoveryTest {
  @Test
  void theServerVersionIsAskedOncePerResync() {
    AtomicLong nanos = new AtomicLong();
    AtomicInteger asked = new AtomicInteger();
    Supplier<String> version =
        Discovery.memoize(
            () -> "v1.36." + asked.incrementAndGet(), Duration.ofMinutes(10), nanos::get);
    assertThat(version.get()).isEqualTo("v1.36.1");
    nanos.addAndGet(Duration.ofMinutes(9).toNanos());
    assertThat(version.get()).isEqualTo("v1.36.1");
    nanos.addAndGet(Duration.ofMinutes(2).toNanos());
    assertThat(version.get()).isEqualTo("v1.36.2");
    assertThat(asked).hasValue(2);
  }
}
