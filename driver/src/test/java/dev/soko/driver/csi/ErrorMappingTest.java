package dev.soko.driver.csi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import csi.v1.Csi;
import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.testing.CsiHarness;
import dev.soko.driver.testing.FakeVolumeManager;
import dev.soko.driver.volume.StorageException;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Engine failures reach the client with the right code, over the real interceptor. */
class ErrorMappingTest {
  private static final Map<StorageException.Reason, Status.Code> EXPECTED =
      Map.of(
          StorageException.Reason.INVALID_ARGUMENT, Status.Code.INVALID_ARGUMENT,
          StorageException.Reason.NOT_FOUND, Status.Code.NOT_FOUND,
          StorageException.Reason.ALREADY_EXISTS, Status.Code.ALREADY_EXISTS,
          StorageException.Reason.OUT_OF_RANGE, Status.Code.OUT_OF_RANGE,
          StorageException.Reason.RESOURCE_EXHAUSTED, Status.Code.RESOURCE_EXHAUSTED,
          StorageException.Reason.FAILED_PRECONDITION, Status.Code.FAILED_PRECONDITION,
          StorageException.Reason.ABORTED, Status.Code.ABORTED,
          StorageException.Reason.UNAVAILABLE, Status.Code.UNAVAILABLE,
          StorageException.Reason.INTERNAL, Status.Code.INTERNAL);

  private final FakeVolumeManager engine = new FakeVolumeManager();
  private CsiHarness harness;

  @BeforeEach
  void start() throws Exception {
    harness =
        new CsiHarness(
            new ControllerService(
                engine,
                new Topology("n"),
                new PoolFsTypes(
                    List.of(
                        new PoolConfig(
                            "p", Path.of("/p"), 0, 1, new LinkedHashSet<>(List.of("ext4"))))),
                GroupIds.AS_KEPT));
  }

  @AfterEach
  void stop() throws Exception {
    harness.close();
  }

  private StatusRuntimeException deleteFails() {
    return catchThrowableOfType(
        StatusRuntimeException.class,
        () ->
            harness
                .controller()
                .deleteVolume(Csi.DeleteVolumeRequest.newBuilder().setVolumeId("v").build()));
  }

  @ParameterizedTest
  @EnumSource(StorageException.Reason.class)
  void everyReasonHasItsCode(StorageException.Reason reason) {
    engine.nextFailure = new StorageException(reason, "told by the engine: " + reason);
    StatusRuntimeException e = deleteFails();
    assertThat(e.getStatus().getCode()).isEqualTo(EXPECTED.get(reason));
    assertThat(e.getStatus().getDescription()).isEqualTo("told by the engine: " + reason);
  }

  @Test
  void aBugBecomesInternalWithoutDetails() {
    engine.nextFailure = new IllegalStateException("secret host detail /etc/shadow");
    StatusRuntimeException e = deleteFails();
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INTERNAL);
    assertThat(e.getStatus().getDescription()).doesNotContain("shadow").contains("driver log");
    assertThat(e.getTrailers().keys()).doesNotContain("grpc-status-details-bin");
  }

  @Test
  void unknownStatusFromCodeBecomesInternal() {
    engine.nextFailure = Status.UNKNOWN.withDescription("what").asRuntimeException();
    assertThat(deleteFails().getStatus().getCode()).isEqualTo(Status.Code.INTERNAL);
    engine.nextFailure = Status.ABORTED.withDescription("busy").asRuntimeException();
    assertThat(deleteFails().getStatus().getCode()).isEqualTo(Status.Code.ABORTED);
  }

  @Test
  void recoversAfterAFailure() {
    engine.nextFailure = new NullPointerException();
    deleteFails();
    harness
        .controller()
        .deleteVolume(Csi.DeleteVolumeRequest.newBuilder().setVolumeId("v").build());
    assertThat(engine.nextFailure).isNull();
  }
}
