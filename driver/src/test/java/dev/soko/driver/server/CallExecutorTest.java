package dev.soko.driver.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class CallExecutorTest {
  private final CallExecutor executor =
      new CallExecutor(
          3,
          2,
          30,
          TimeUnit.SECONDS,
          runnable -> {
            Thread thread = new Thread(runnable);
            thread.setDaemon(true);
            return thread;
          });
  private final CountDownLatch release = new CountDownLatch(1);

  @AfterEach
  void stop() {
    release.countDown();
    executor.shutdownNow();
  }

  @Test
  void oneCallAtATimeKeepsOneThread() throws Exception {
    for (int i = 0; i < 20; i++) {
      CountDownLatch done = new CountDownLatch(1);
      executor.execute(done::countDown);
      assertThat(done.await(5, TimeUnit.SECONDS)).isTrue();
      awaitIdle();
    }
    assertThat(executor.getPoolSize()).isEqualTo(1);
  }

  @Test
  void growsToTheMaximumWhenAllThreadsAreBusyThenQueuesThenRejects() throws Exception {
    CountDownLatch started = new CountDownLatch(3);
    for (int i = 0; i < 3; i++) {
      executor.execute(() -> blockUntilReleased(started));
    }
    assertThat(started.await(5, TimeUnit.SECONDS)).as("three calls run at once").isTrue();
    assertThat(executor.getPoolSize()).isEqualTo(3);

    CountDownLatch queuedRan = new CountDownLatch(2);
    executor.execute(queuedRan::countDown);
    executor.execute(queuedRan::countDown);
    assertThat(executor.getQueue()).hasSize(2);
    assertThatThrownBy(() -> executor.execute(() -> {}))
        .isInstanceOf(RejectedExecutionException.class)
        .hasMessageContaining("more than 2 CSI calls are waiting");

    release.countDown();
    assertThat(queuedRan.await(5, TimeUnit.SECONDS)).as("queued calls run later").isTrue();
    assertThat(executor.getPoolSize()).isEqualTo(3);
  }

  private void blockUntilReleased(CountDownLatch started) {
    started.countDown();
    try {
      release.await(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** afterExecute runs just after the task; wait until the executor counts the call as done. */
  private void awaitIdle() throws InterruptedException {
    for (int i = 0; i < 500 && executor.getActiveCount() > 0; i++) {
      Thread.sleep(2);
    }
  }
}
