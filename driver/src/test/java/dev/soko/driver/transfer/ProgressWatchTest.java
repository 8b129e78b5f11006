package dev.soko.driver.transfer;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Context;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ProgressWatchTest {
  final AtomicLong now = new AtomicLong();

  @Test
  void aCallIsCancelledOnlyAfterTheStallPeriodWithoutProgress() {
    Context.CancellableContext call = Context.current().withCancellation();
    ProgressWatch watch = new ProgressWatch(call, Duration.ofSeconds(60), now::get);

    now.addAndGet(Duration.ofSeconds(50).toNanos());
    watch.check();
    watch.progress();
    now.addAndGet(Duration.ofSeconds(50).toNanos());
    watch.check();
    assertThat(call.isCancelled()).isFalse();
    assertThat(watch.stalled()).isFalse();

    now.addAndGet(Duration.ofSeconds(11).toNanos());
    watch.check();
    assertThat(call.isCancelled()).isTrue();
    assertThat(watch.stalled()).isTrue();
  }
}
