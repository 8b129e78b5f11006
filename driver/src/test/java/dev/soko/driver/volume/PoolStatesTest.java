package dev.soko.driver.volume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.pool.PoolVerdict;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class PoolStatesTest {
  final AtomicLong now = new AtomicLong(1_000);
  final AtomicReference<PoolVerdict> fast = new AtomicReference<>(PoolVerdict.refused("no disk"));
  final List<Map<String, PoolVerdict>> seen = new ArrayList<>();

  PoolStates states() {
    List<PoolConfig> pools =
        List.of(
            new PoolConfig("fast", Path.of("/fast"), 0, 1, Set.of("ext4")),
            new PoolConfig("slow", Path.of("/slow"), 0, 1, Set.of("ext4")));
    return new PoolStates(
        pools, p -> p.name().equals("fast") ? fast.get() : PoolVerdict.READY, now::get);
  }

  @Test
  void aPoolIsCheckedAgainOnlyAfterTheIntervalAndListenersSeeChanges() {
    PoolStates states = states();
    states.onChange(seen::add);
    assertThat(seen).hasSize(1);
    assertThat(seen.get(0).get("fast").reason()).isEqualTo("no disk");

    fast.set(PoolVerdict.READY);
    now.addAndGet(PoolStates.RECHECK.toNanos() - 1);
    assertThat(states.refresh().get("fast").ready()).as("not re-checked yet").isFalse();
    now.addAndGet(1);
    assertThat(states.refresh().get("fast").ready()).isTrue();
    assertThat(seen).hasSize(2);
    now.addAndGet(PoolStates.RECHECK.toNanos());
    states.refresh();
    assertThat(seen).as("an unchanged verdict is not reported again").hasSize(2);
  }

  @Test
  void newVolumesNeedAReadyPoolTheDefaultBeingTheFirst() {
    PoolStates states = states();
    StorageException e =
        catchThrowableOfType(StorageException.class, () -> states.requireReady(""));
    assertThat(e.reason()).isEqualTo(StorageException.Reason.RESOURCE_EXHAUSTED);
    assertThat(e.getMessage())
        .isEqualTo("pool fast takes no volumes on this node: refused, no disk");
    assertThatCode(() -> states.requireReady("slow")).doesNotThrowAnyException();
  }

  @Test
  void aCheckThatThrowsRefusesThePool() {
    PoolStates states =
        new PoolStates(
            List.of(new PoolConfig("p", Path.of("/p"), 0, 1, Set.of("ext4"))),
            p -> {
              throw new IllegalStateException("mountinfo unreadable");
            },
            now::get);
    assertThat(states.verdict("p").state()).isEqualTo(PoolVerdict.State.REFUSED);
    assertThat(states.verdict("p").reason()).contains("mountinfo unreadable");
  }

  @Test
  void aRecheckJudgesThePoolsAtOnceWhateverTheInterval() {
    PoolStates states = states();
    states.onChange(seen::add);
    fast.set(PoolVerdict.notSelected("label disk is 'hdd', not 'nvme'"));
    states.recheck();
    assertThat(states.verdict("fast").state()).isEqualTo(PoolVerdict.State.NOT_SELECTED);
    assertThat(seen).hasSize(2);
    states.recheck();
    assertThat(seen).as("an unchanged verdict is not reported again").hasSize(2);
  }
}
