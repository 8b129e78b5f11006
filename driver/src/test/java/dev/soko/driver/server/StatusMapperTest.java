package dev.soko.driver.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.driver.exec.ExecException;
import dev.soko.driver.mount.MountException;
import dev.soko.driver.pool.PoolException;
import io.grpc.Status;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The lower layers' typed failures reach a client under the codes they had as StorageExceptions.
 */
class StatusMapperTest {

  private static final Map<PoolException.Kind, Status.Code> POOL =
      Map.of(
          PoolException.Kind.BAD_INPUT, Status.Code.INVALID_ARGUMENT,
          PoolException.Kind.SIZE_OUT_OF_RANGE, Status.Code.OUT_OF_RANGE,
          PoolException.Kind.NO_SPACE, Status.Code.RESOURCE_EXHAUSTED,
          PoolException.Kind.UNUSABLE, Status.Code.UNAVAILABLE,
          PoolException.Kind.STORAGE_MISSING, Status.Code.FAILED_PRECONDITION);

  private static final Map<MountException.Kind, Status.Code> MOUNT =
      Map.of(
          MountException.Kind.REFUSED_INPUT, Status.Code.INVALID_ARGUMENT,
          MountException.Kind.NOT_PERMITTED, Status.Code.FAILED_PRECONDITION,
          MountException.Kind.BUSY, Status.Code.UNAVAILABLE,
          MountException.Kind.FAILED, Status.Code.INTERNAL);

  @ParameterizedTest
  @EnumSource(PoolException.Kind.class)
  void everyPoolFailureKeepsItsMessageUnderItsCode(PoolException.Kind kind) {
    Status status = StatusMapper.toStatus(new PoolException(kind, "pool says " + kind, null));
    assertThat(status.getCode()).isEqualTo(POOL.get(kind));
    assertThat(status.getDescription()).isEqualTo("pool says " + kind);
    assertThat(StatusMapper.isUnexpected(new PoolException(kind, "x", null))).isFalse();
  }

  @ParameterizedTest
  @EnumSource(MountException.Kind.class)
  void everyMountFailureKeepsItsMessageUnderItsCode(MountException.Kind kind) {
    Status status = StatusMapper.toStatus(new MountException(kind, "mount says " + kind, null));
    assertThat(status.getCode()).isEqualTo(MOUNT.get(kind));
    assertThat(status.getDescription()).isEqualTo("mount says " + kind);
  }

  @Test
  void aFailedProgramIsInternalWithItsDescriptionAndNotABug() {
    Status status = StatusMapper.toStatus(new ExecException("mkfs.xfs exited 1: no space"));
    assertThat(status.getCode()).isEqualTo(Status.Code.INTERNAL);
    assertThat(status.getDescription()).isEqualTo("mkfs.xfs exited 1: no space");
    assertThat(StatusMapper.isUnexpected(new ExecException("x"))).isFalse();
  }
}
