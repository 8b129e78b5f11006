package dev.soko.driver.volume;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.driver.attribute.AttributeException;
import dev.soko.driver.btrfs.BtrfsException;
import dev.soko.driver.exec.ExecException;
import dev.soko.driver.failure.TypedFailure;
import dev.soko.driver.mount.MountException;
import dev.soko.driver.pool.PoolException;
import dev.soko.driver.volume.StorageException.Reason;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What a client is told for every kind of every lower layer's failure: the table {@link Failures}
 * and the failures' own reasons make together, written out once so that a change to either shows.
 */
class FailuresTest {

  @Test
  void everyKindOfFailureReachesTheClientUnderItsCode() {
    Map<TypedFailure, Reason> expected = new LinkedHashMap<>();
    expected.put(pool(PoolException.Kind.BAD_INPUT), Reason.INVALID_ARGUMENT);
    expected.put(pool(PoolException.Kind.SIZE_OUT_OF_RANGE), Reason.OUT_OF_RANGE);
    expected.put(pool(PoolException.Kind.NO_SPACE), Reason.RESOURCE_EXHAUSTED);
    expected.put(pool(PoolException.Kind.UNUSABLE), Reason.UNAVAILABLE);
    expected.put(pool(PoolException.Kind.STORAGE_MISSING), Reason.FAILED_PRECONDITION);
    expected.put(mount(MountException.Kind.REFUSED_INPUT), Reason.INVALID_ARGUMENT);
    expected.put(mount(MountException.Kind.NOT_PERMITTED), Reason.FAILED_PRECONDITION);
    expected.put(mount(MountException.Kind.BUSY), Reason.UNAVAILABLE);
    expected.put(mount(MountException.Kind.FAILED), Reason.INTERNAL);
    expected.put(btrfs(BtrfsException.Kind.SUBVOLUME_MISSING), Reason.FAILED_PRECONDITION);
    expected.put(btrfs(BtrfsException.Kind.NO_SPACE), Reason.RESOURCE_EXHAUSTED);
    expected.put(btrfs(BtrfsException.Kind.FAILED), Reason.INTERNAL);
    expected.put(
        new AttributeException(AttributeException.Kind.REFUSED, "m"), Reason.INVALID_ARGUMENT);
    expected.put(
        new AttributeException(AttributeException.Kind.NOT_READY, "m"), Reason.FAILED_PRECONDITION);

    int kinds =
        PoolException.Kind.values().length
            + MountException.Kind.values().length
            + BtrfsException.Kind.values().length
            + AttributeException.Kind.values().length;
    assertThat(expected).hasSize(kinds);
    expected.forEach(
        (failure, reason) -> {
          StorageException storage = Failures.asStorage(failure);
          assertThat(storage.reason()).as(failure.kind().toString()).isEqualTo(reason);
          assertThat(storage).hasMessage("m").hasCause(failure);
        });
  }

  @Test
  void aProgramThatFailedIsInternalAndAnythingElseIsLeftToTheCaller() {
    ExecException exec = new ExecException("m");
    assertThat(Failures.asStorage(exec).reason()).isEqualTo(Reason.INTERNAL);
    assertThat(Failures.asStorage(new IllegalStateException("bug"))).isNull();
  }

  private static PoolException pool(PoolException.Kind kind) {
    return new PoolException(kind, "m", null);
  }

  private static MountException mount(MountException.Kind kind) {
    return new MountException(kind, "m", null);
  }

  private static BtrfsException btrfs(BtrfsException.Kind kind) {
    return new BtrfsException(kind, "m", null);
  }
}
