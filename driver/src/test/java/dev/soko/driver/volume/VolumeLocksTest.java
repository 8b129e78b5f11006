package dev.soko.driver.volume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
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

  @Test
  void aGroupTakesItsNameThenAllItsVolumesAndItsDeleteEachMemberInTurn() {
    try (KeyedLocks.Held name = locks.groupName("g")) {
      try (KeyedLocks.Held volumes = locks.volumes(List.of("vol-b", "vol-a", "vol-c"))) {
        assertThat(locks.activeKeys()).isEqualTo(4);
        assertThatThrownBy(() -> locks.volume("vol-d")).isInstanceOf(IllegalStateException.class);
      }
    }
    try (KeyedLocks.Held group = locks.group("group-1")) {
      for (String member : List.of("snap-1", "snap-2")) {
        try (KeyedLocks.Held snapshot = locks.snapshot(member)) {
          assertThat(locks.activeKeys()).isEqualTo(2);
        }
      }
      assertThatThrownBy(() -> locks.groupName("g")).isInstanceOf(IllegalStateException.class);
    }
    try (KeyedLocks.Held volume = locks.volume("vol-a")) {
      assertThatThrownBy(() -> locks.volumes(List.of("vol-b")))
          .isInstanceOf(IllegalStateException.class);
    }
    assertThat(locks.activeKeys()).isZero();
  }

  /**
   * Two groups that share volumes, named in opposite orders, and single-volume calls, all at once:
   * every one finishes (the volumes are taken in ID order, so no two wait for each other).
   */
  @Test
  void groupsNamingSharedVolumesInOppositeOrdersDoNotDeadlock() throws Exception {
    List<String> forward = List.of("vol-1", "vol-2", "vol-3");
    List<String> backward = List.of("vol-3", "vol-2", "vol-1");
    java.util.List<CompletableFuture<Void>> calls = new java.util.ArrayList<>();
    for (int t = 0; t < 4; t++) {
      List<String> order = t % 2 == 0 ? forward : backward;
      calls.add(
          CompletableFuture.runAsync(
              () -> {
                for (int i = 0; i < 2000; i++) {
                  try (KeyedLocks.Held held = locks.volumes(order)) {
                    Thread.onSpinWait();
                  }
                  try (KeyedLocks.Held one = locks.volume(order.get(i % 3))) {
                    Thread.onSpinWait();
                  }
                }
              }));
    }
    CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
    assertThat(locks.activeKeys()).isZero();
  }
}
