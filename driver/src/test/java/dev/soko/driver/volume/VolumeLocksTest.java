package dev.soko.driver.volume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

// A KeyedLocks.Held is used only for its scope: the lock is held until the block ends.
@SuppressWarnings("try")
class VolumeLocksTest {
  private final VolumeLocks locks = new VolumeLocks();

  @Test
  void aCreateTakesItsNameThenItsSourcesId() {
    try (KeyedLocks.Held name = locks.volumeName("pvc-1")) {
      try (KeyedLocks.Held source = locks.snapshot("snap-1")) {
        assertThat(locks.activeKeys()).isEqualTo(2);
      }
    }
    try (KeyedLocks.Held name = locks.snapshotName("snap-2")) {
      try (KeyedLocks.Held source = locks.volume("vol-1")) {
        assertThat(locks.activeKeys()).isEqualTo(2);
      }
    }
    assertThat(locks.activeKeys()).isZero();
  }

  @Test
  void aNameWhileHoldingAnIdIsRefusedAndReleasesNothing() {
    try (KeyedLocks.Held id = locks.volume("vol-1")) {
      assertThatThrownBy(() -> locks.volumeName("pvc-1"))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("lock order")
          .hasMessageContaining("VOLUME_NAME pvc-1");
      assertThat(locks.activeKeys()).isEqualTo(1);
    }
    assertThat(locks.activeKeys()).isZero();
  }

  @Test
  void twoIdsOrTwoNamesAtOnceAreRefused() {
    try (KeyedLocks.Held id = locks.volume("vol-1")) {
      assertThatThrownBy(() -> locks.snapshot("snap-1")).isInstanceOf(IllegalStateException.class);
      assertThatThrownBy(() -> locks.volume("vol-1")).isInstanceOf(IllegalStateException.class);
    }
    try (KeyedLocks.Held name = locks.volumeName("pvc-1")) {
      assertThatThrownBy(() -> locks.snapshotName("snap-1"))
          .isInstanceOf(IllegalStateException.class);
    }
  }

  @Test
  void theOrderIsKeptPerThread() throws Exception {
    try (KeyedLocks.Held id = locks.volume("vol-1")) {
      CompletableFuture<Void> other =
          CompletableFuture.runAsync(
              () -> {
                try (KeyedLocks.Held name = locks.volumeName("pvc-2")) {
                  try (KeyedLocks.Held source = locks.volume("vol-2")) {
                    assertThat(locks.activeKeys()).isEqualTo(3);
                  }
                }
              });
      other.get(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void aReleasedLockCanBeTakenAgainInAnyOrder() {
    try (KeyedLocks.Held id = locks.volume("vol-1")) {
      assertThat(locks.activeKeys()).isEqualTo(1);
    }
    try (KeyedLocks.Held name = locks.volumeName("pvc-1")) {
      assertThat(locks.activeKeys()).isEqualTo(1);
    }
  }
}
