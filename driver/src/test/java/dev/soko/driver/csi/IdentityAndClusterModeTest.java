package dev.soko.driver.csi;

import static dev.soko.driver.csi.ControllerServiceTest.assertCode;
import static org.assertj.core.api.Assertions.assertThat;

import csi.v1.Csi;
import csi.v1.Csi.ControllerServiceCapability.RPC.Type;
import csi.v1.Csi.PluginCapability.Service;
import dev.soko.driver.testing.CsiHarness;
import dev.soko.driver.volume.ExpandResult;
import dev.soko.driver.volume.StorageException;
import io.grpc.Status;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class IdentityAndClusterModeTest {

  @Test
  void identityReportsNameCapabilitiesAndReadiness() throws Exception {
    AtomicBoolean ready = new AtomicBoolean(false);
    try (CsiHarness harness =
        new CsiHarness(
            new IdentityService(
                "csi.soko.dev",
                "1.2.3",
                () -> ready.get() ? Optional.empty() : Optional.of("pools not usable yet: p")))) {
      Csi.GetPluginInfoResponse info =
          harness.identity().getPluginInfo(Csi.GetPluginInfoRequest.getDefaultInstance());
      assertThat(info.getName()).isEqualTo("csi.soko.dev");
      assertThat(info.getVendorVersion()).isEqualTo("1.2.3");

      assertThat(
              harness
                  .identity()
                  .getPluginCapabilities(Csi.GetPluginCapabilitiesRequest.getDefaultInstance())
                  .getCapabilitiesList())
          .extracting(c -> c.getService().getType())
          .containsExactlyInAnyOrder(
              Service.Type.CONTROLLER_SERVICE, Service.Type.VOLUME_ACCESSIBILITY_CONSTRAINTS);

      Csi.ProbeRequest probe = Csi.ProbeRequest.getDefaultInstance();
      assertThat(harness.identity().probe(probe).getReady().getValue()).isFalse();
      ready.set(true);
      assertThat(harness.identity().probe(probe).getReady().getValue()).isTrue();
    }
  }

  @Test
  void controllerModeOnlyExpandsAndLeavesTheCheckToTheNode() throws Exception {
    try (CsiHarness harness = new CsiHarness(new ClusterControllerService())) {
      assertThat(
              harness
                  .controller()
                  .controllerGetCapabilities(
                      Csi.ControllerGetCapabilitiesRequest.getDefaultInstance())
                  .getCapabilitiesList())
          .extracting(c -> c.getRpc().getType())
          .containsExactly(Type.EXPAND_VOLUME);

      Csi.ControllerExpandVolumeResponse response =
          harness
              .controller()
              .controllerExpandVolume(
                  Csi.ControllerExpandVolumeRequest.newBuilder()
                      .setVolumeId("vol-1")
                      .setCapacityRange(Csi.CapacityRange.newBuilder().setRequiredBytes(3 << 20))
                      .build());
      assertThat(response.getCapacityBytes()).isEqualTo(3 << 20);
      assertThat(response.getNodeExpansionRequired()).isTrue();

      assertCode(
          () ->
              harness
                  .controller()
                  .controllerExpandVolume(
                      Csi.ControllerExpandVolumeRequest.newBuilder()
                          .setVolumeId("vol-1")
                          .setCapacityRange(Csi.CapacityRange.getDefaultInstance())
                          .build()),
          Status.Code.INVALID_ARGUMENT,
          "required_bytes or limit_bytes");
      assertCode(
          () ->
              harness
                  .controller()
                  .createVolume(Csi.CreateVolumeRequest.newBuilder().setName("x").build()),
          Status.Code.UNIMPLEMENTED,
          "");
      assertCode(
          () -> harness.node().nodeGetInfo(Csi.NodeGetInfoRequest.getDefaultInstance()),
          Status.Code.UNIMPLEMENTED,
          "");
    }
  }

  static Csi.ControllerExpandVolumeRequest expand(String volumeId, long requiredBytes) {
    return Csi.ControllerExpandVolumeRequest.newBuilder()
        .setVolumeId(volumeId)
        .setCapacityRange(Csi.CapacityRange.newBuilder().setRequiredBytes(requiredBytes))
        .build();
  }

  @Test
  void withAWayToTheNodesGrowthAnswersWhatTheNodeDidAndTheKubeletsPathWhereItCouldNot()
      throws Exception {
    ClusterControllerService.VolumeExpander expander =
        (id, required, limit) ->
            switch (id) {
              case "vol-grown" -> Optional.of(new ExpandResult(required + 4096, false));
              case "vol-ext4" -> Optional.of(new ExpandResult(required, true));
              case "vol-full" ->
                  throw StorageException.outOfRange(
                      "node n refused: pool main has 10 bytes available");
              case "vol-gone" ->
                  throw new StorageException(
                      StorageException.Reason.UNAVAILABLE, "node n does not exist now");
              default -> Optional.empty(); // the node could not answer
            };
    try (CsiHarness harness =
        new CsiHarness(
            new ClusterControllerService(
                Optional.of(expander), Optional.empty(), Optional.empty()))) {
      Csi.ControllerExpandVolumeResponse grown =
          harness.controller().controllerExpandVolume(expand("vol-grown", 3 << 20));
      assertThat(grown.getCapacityBytes()).isEqualTo((3 << 20) + 4096);
      assertThat(grown.getNodeExpansionRequired()).isFalse();
      assertThat(
              harness
                  .controller()
                  .controllerExpandVolume(expand("vol-ext4", 3 << 20))
                  .getNodeExpansionRequired())
          .isTrue();
      Csi.ControllerExpandVolumeResponse silent =
          harness.controller().controllerExpandVolume(expand("vol-down", 3 << 20));
      assertThat(silent.getCapacityBytes()).isEqualTo(3 << 20);
      assertThat(silent.getNodeExpansionRequired()).isTrue();
      assertCode(
          () -> harness.controller().controllerExpandVolume(expand("vol-full", 3 << 20)),
          Status.Code.OUT_OF_RANGE,
          "pool main has 10 bytes available");
      assertCode(
          () -> harness.controller().controllerExpandVolume(expand("vol-gone", 3 << 20)),
          Status.Code.UNAVAILABLE,
          "does not exist now");
      assertCode(
          () ->
              harness
                  .controller()
                  .controllerExpandVolume(
                      Csi.ControllerExpandVolumeRequest.newBuilder()
                          .setVolumeId("vol-grown")
                          .build()),
          Status.Code.INVALID_ARGUMENT,
          "capacity_range is required");
    }
  }

  @Test
  void withAWayToTheNodesControllerModeAlsoModifiesVolumesAndSaysWhyItCannot() throws Exception {
    java.util.List<String> modified = new java.util.ArrayList<>();
    ClusterControllerService.VolumeModifier modifier =
        (id, parameters) -> {
          if (id.equals("vol-refused")) {
            throw dev.soko.driver.volume.StorageException.invalid("node n refused: bad readIOPS");
          }
          modified.add(id + " " + parameters);
        };
    try (CsiHarness harness =
        new CsiHarness(
            new ClusterControllerService(
                java.util.Optional.of(modifier), java.util.Optional.empty()))) {
      assertThat(
              harness
                  .controller()
                  .controllerGetCapabilities(
                      Csi.ControllerGetCapabilitiesRequest.getDefaultInstance())
                  .getCapabilitiesList())
          .extracting(c -> c.getRpc().getType())
          .containsExactly(Type.EXPAND_VOLUME, Type.MODIFY_VOLUME);
      harness
          .controller()
          .controllerModifyVolume(
              Csi.ControllerModifyVolumeRequest.newBuilder()
                  .setVolumeId("vol-1")
                  .putMutableParams("readIOPS", "200")
                  .build());
      assertThat(modified).containsExactly("vol-1 {readIOPS=200}");
      assertCode(
          () ->
              harness
                  .controller()
                  .controllerModifyVolume(
                      Csi.ControllerModifyVolumeRequest.newBuilder()
                          .setVolumeId("vol-refused")
                          .build()),
          Status.Code.INVALID_ARGUMENT,
          "node n refused: bad readIOPS");
    }
    try (CsiHarness harness = new CsiHarness(new ClusterControllerService())) {
      assertCode(
          () ->
              harness
                  .controller()
                  .controllerModifyVolume(
                      Csi.ControllerModifyVolumeRequest.newBuilder().setVolumeId("vol-1").build()),
          Status.Code.UNAVAILABLE,
          "needs the API server");
    }
  }
}
