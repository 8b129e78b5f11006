package dev.soko.driver.csi;

import static dev.soko.driver.csi.ControllerServiceTest.assertCode;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import csi.v1.ControllerGrpc.ControllerBlockingStub;
import csi.v1.Csi;
import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.testing.Caps;
import dev.soko.driver.testing.CsiHarness;
import dev.soko.driver.testing.FakeVolumeManager;
import dev.soko.driver.volume.StorageException;
import io.grpc.Status;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A StorageClass parameter that a per-volume attribute owns reaches the engine, which checks it,
 * from CreateVolume, GetCapacity and ValidateVolumeCapabilities alike (the external-provisioner
 * sends a class's parameters to all three); any other unknown key is refused as before.
 */
class AttributeParametersTest {
  private final FakeVolumeManager engine = new FakeVolumeManager();
  private CsiHarness harness;
  private ControllerBlockingStub controller;

  @BeforeEach
  void start() throws Exception {
    engine.attributeParameters = List.of("colour");
    PoolFsTypes pools =
        new PoolFsTypes(
            List.of(
                new PoolConfig(
                    "fast", Path.of("/p1"), 0, 1, new LinkedHashSet<>(List.of("ext4")))));
    harness =
        new CsiHarness(
            new ControllerService(engine, new Topology("node-a"), pools, GroupIds.AS_KEPT));
    controller = harness.controller();
  }

  @AfterEach
  void stop() throws Exception {
    harness.close();
  }

  @Test
  void anAttributesClassParameterReachesTheEngineAndOthersAreRefused() {
    Csi.CreateVolumeResponse created =
        controller.createVolume(
            Csi.CreateVolumeRequest.newBuilder()
                .setName("pvc-1")
                .addVolumeCapabilities(Caps.mount("ext4"))
                .putParameters("colour", "red")
                .putParameters("pool", "fast")
                .build());
    assertThat(engine.lastCreate.parameters()).isEqualTo(Map.of("colour", "red", "pool", "fast"));

    assertThat(
            controller
                .getCapacity(
                    Csi.GetCapacityRequest.newBuilder()
                        .putParameters("colour", "red")
                        .addVolumeCapabilities(Caps.mount("ext4"))
                        .build())
                .getAvailableCapacity())
        .isNotNegative();
    assertThat(
            controller
                .validateVolumeCapabilities(
                    Csi.ValidateVolumeCapabilitiesRequest.newBuilder()
                        .setVolumeId(created.getVolume().getVolumeId())
                        .addVolumeCapabilities(Caps.mount("ext4"))
                        .putParameters("colour", "red")
                        .build())
                .hasConfirmed())
        .isTrue();

    assertCode(
        () ->
            controller.createVolume(
                Csi.CreateVolumeRequest.newBuilder()
                    .setName("pvc-2")
                    .addVolumeCapabilities(Caps.mount("ext4"))
                    .putParameters("color", "red")
                    .build()),
        Status.Code.INVALID_ARGUMENT,
        "unknown parameter 'color': this driver accepts only 'pool', 'fsType' and 'colour'");
  }

  @Test
  void withoutSuchAttributesTheAnswerIsAsItWas() {
    assertThat(Parameters.parse(Map.of("pool", "p")).recognised()).isEqualTo(Map.of("pool", "p"));
    assertThatThrownBy(() -> Parameters.parse(Map.of("colour", "red")))
        .isInstanceOfSatisfying(
            StorageException.class,
            e -> assertThat(e.reason()).isEqualTo(StorageException.Reason.INVALID_ARGUMENT))
        .hasMessage("unknown parameter 'colour': this driver accepts only 'pool' and 'fsType'");
  }
}
