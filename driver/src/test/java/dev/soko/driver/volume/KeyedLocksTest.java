package dev.soko.driver.volume;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

// A KeyedLocks.Held is used only for its scope: the lock is held until the block ends.
@SuppressWarnings("try")
class KeyedLocksTest {

  @Test
  void serialisesOneKeyAndForgetsIdleKeys() throws Exception {
    KeyedLocks locks = new KeyedLocks();
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger maxInside = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(8);
    CountDownLatch start = new CountDownLatch(1);
    for (int i = 0; i < 64; i++) {
      pool.submit(
          () -> {
            start.await();
            try (KeyedLocks.Held held = locks.lock("volume:a")) {
              maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
              Thread.sleep(1);
              inside.decrementAndGet();
            }
            return null;
          });
    }
    start.countDown();
    pool.shutdown();
    assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    assertThat(maxInside.get()).isEqualTo(1);
    assertThat(locks.activeKeys()).isZero();
  }

  @Test
  void differentKeysDoNotBlockEachOther() throws Exception {
    KeyedLocks locks = new KeyedLocks();
    try (KeyedLocks.Held a = locks.lock("a")) {
      Thread other =
          new Thread(
              () -> {
                try (KeyedLocks.Held b = locks.lock("b")) {
                  // acquired while "a" is held
                }
              });
      other.start();
      other.join(5000);
      assertThat(other.isAlive()).isFalse();
      assertThat(locks.activeKeys()).isEqualTo(1);
    }
  }
}
