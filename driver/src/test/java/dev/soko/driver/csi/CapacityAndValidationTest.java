package dev.soko.driver.csi;

import static dev.soko.driver.csi.ControllerServiceTest.assertCode;
import static org.assertj.core.api.Assertions.assertThat;

import csi.v1.ControllerGrpc.ControllerBlockingStub;
import csi.v1.Csi;
import csi.v1.Csi.VolumeCapability.AccessMode;
import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.model.PoolCapacity;
import dev.soko.driver.testing.Caps;
import dev.soko.driver.testing.CsiHarness;
import dev.soko.driver.testing.FakeVolumeManager;
import io.grpc.Status;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** GetCapacity and ValidateVolumeCapabilities: answers, not errors, for what cannot be served. */
class CapacityAndValidationTest {
  private final FakeVolumeManager engine = new FakeVolumeManager();
  private CsiHarness harness;
  private ControllerBlockingStub controller;

  @BeforeEach
  void start() throws Exception {
    engine.capacities =
        List.of(new PoolCapacity("fast", 100, 60, 50), new PoolCapacity("big", 1000, 900, 800));
    PoolFsTypes pools =
        new PoolFsTypes(
            List.of(
                new PoolConfig("fast", Path.of("/p1"), 0, 1, new LinkedHashSet<>(List.of("ext4"))),
                new PoolConfig(
                    "big", Path.of("/p2"), 0, 1, new LinkedHashSet<>(List.of("xfs", "ext4")))));
    harness =
        new CsiHarness(
            new ControllerService(engine, new Topology("node-a"), pools, GroupIds.AS_KEPT));
    controller = harness.controller();
  }

  @AfterEach
  void stop() throws Exception {
    harness.close();
  }

  private Csi.GetCapacityResponse capacity(Csi.GetCapacityRequest.Builder request) {
    return controller.getCapacity(request.build());
  }

  @Test
  void capacityOfTheDefaultPoolWithMaximumVolumeSize() {
    Csi.GetCapacityResponse response = capacity(Csi.GetCapacityRequest.newBuilder());
    assertThat(response.getAvailableCapacity()).isEqualTo(60);
    assertThat(response.getMaximumVolumeSize().getValue()).isEqualTo(50);
  }

  @Test
  void capacityOfANamedPoolOnThisNode() {
    Csi.GetCapacityResponse response =
        capacity(
            Csi.GetCapacityRequest.newBuilder()
                .putParameters("pool", "big")
                .setAccessibleTopology(
                    Csi.Topology.newBuilder().putSegments(Topology.NODE_KEY, "node-a")));
    assertThat(response.getAvailableCapacity()).isEqualTo(900);
    assertThat(response.getMaximumVolumeSize().getValue()).isEqualTo(800);
  }

  @Test
  void zeroForWhatThisNodeCannotServe() {
    assertThat(
            capacity(
                    Csi.GetCapacityRequest.newBuilder()
                        .setAccessibleTopology(
                            Csi.Topology.newBuilder().putSegments(Topology.NODE_KEY, "node-b")))
                .getAvailableCapacity())
        .as("other node")
        .isZero();
    assertThat(capacity(Csi.GetCapacityRequest.newBuilder().putParameters("pool", "nope")))
        .extracting(Csi.GetCapacityResponse::getAvailableCapacity)
        .as("unknown pool")
        .isEqualTo(0L);
    assertThat(
            capacity(
                    Csi.GetCapacityRequest.newBuilder()
                        .putParameters("pool", "fast")
                        .addVolumeCapabilities(Caps.mount("xfs")))
                .getAvailableCapacity())
        .as("pool without xfs")
        .isZero();
    assertThat(
            capacity(
                    Csi.GetCapacityRequest.newBuilder()
                        .addVolumeCapabilities(
                            Caps.withMode(Caps.block(), AccessMode.Mode.MULTI_NODE_READER_ONLY)))
                .getAvailableCapacity())
        .as("multi-node mode")
        .isZero();
    assertThat(
            capacity(
                    Csi.GetCapacityRequest.newBuilder()
                        .putParameters("pool", "big")
                        .addVolumeCapabilities(Caps.mount("xfs")))
                .getAvailableCapacity())
        .isEqualTo(900);
  }

  @Test
  void capacityRefusesUnknownParameters() {
    assertCode(
        () -> capacity(Csi.GetCapacityRequest.newBuilder().putParameters("type", "ssd")),
        Status.Code.INVALID_ARGUMENT,
        "unknown parameter");
  }

  private Csi.ValidateVolumeCapabilitiesResponse validate(
      String volumeId, Csi.VolumeCapability capability) {
    return controller.validateVolumeCapabilities(
        Csi.ValidateVolumeCapabilitiesRequest.newBuilder()
            .setVolumeId(volumeId)
            .addVolumeCapabilities(capability)
            .build());
  }

  @Test
  void validateConfirmsMatchingCapabilitiesAndExplainsOthers() {
    String id =
        controller
            .createVolume(
                Csi.CreateVolumeRequest.newBuilder()
                    .setName("a")
                    .addVolumeCapabilities(Caps.mount("ext4"))
                    .build())
            .getVolume()
            .getVolumeId();

    Csi.ValidateVolumeCapabilitiesResponse ok = validate(id, Caps.mount(""));
    assertThat(ok.hasConfirmed()).isTrue();
    assertThat(ok.getConfirmed().getVolumeCapabilitiesList()).containsExactly(Caps.mount(""));

    Csi.ValidateVolumeCapabilitiesResponse block = validate(id, Caps.block());
    assertThat(block.hasConfirmed()).isFalse();
    assertThat(block.getMessage()).contains("mount access");

    Csi.ValidateVolumeCapabilitiesResponse xfs = validate(id, Caps.mount("xfs"));
    assertThat(xfs.hasConfirmed()).isFalse();
    assertThat(xfs.getMessage()).contains("ext4");

    Csi.ValidateVolumeCapabilitiesResponse multi =
        validate(id, Caps.withMode(Caps.mount(""), AccessMode.Mode.MULTI_NODE_MULTI_WRITER));
    assertThat(multi.hasConfirmed()).isFalse();

    assertCode(() -> validate("missing", Caps.mount("")), Status.Code.NOT_FOUND, "volume missing");
    assertCode(
        () ->
            controller.validateVolumeCapabilities(
                Csi.ValidateVolumeCapabilitiesRequest.newBuilder().setVolumeId(id).build()),
        Status.Code.INVALID_ARGUMENT,
        "volume_capabilities is required");
  }
}
