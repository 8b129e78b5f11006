package dev.soko.driver.csi;

import static dev.soko.driver.csi.Replies.reply;

import com.google.protobuf.BoolValue;
import csi.v1.Csi;
import csi.v1.IdentityGrpc;
import io.grpc.stub.StreamObserver;
import java.util.function.BooleanSupplier;

/** Identity: name and version, the plugin capabilities, and readiness for Probe. */
public final class IdentityService extends IdentityGrpc.IdentityImplBase {
  private final String driverName;
  private final String version;
  private final BooleanSupplier ready;

  /**
   * @param ready true once the process can serve; in node mode, {@code VolumeManager::ready}
   */
  public IdentityService(String driverName, String version, BooleanSupplier ready) {
    this.driverName = driverName;
    this.version = version;
    this.ready = ready;
  }

  @Override
  public void getPluginInfo(
      Csi.GetPluginInfoRequest request, StreamObserver<Csi.GetPluginInfoResponse> observer) {
    reply(
        observer,
        Csi.GetPluginInfoResponse.newBuilder()
            .setName(driverName)
            .setVendorVersion(version)
            .build());
  }

  @Override
  public void getPluginCapabilities(
      Csi.GetPluginCapabilitiesRequest request,
      StreamObserver<Csi.GetPluginCapabilitiesResponse> observer) {
    reply(
        observer,
        Csi.GetPluginCapabilitiesResponse.newBuilder()
            .addCapabilities(service(Csi.PluginCapability.Service.Type.CONTROLLER_SERVICE))
            .addCapabilities(
                service(Csi.PluginCapability.Service.Type.VOLUME_ACCESSIBILITY_CONSTRAINTS))
            .build());
  }

  private static Csi.PluginCapability service(Csi.PluginCapability.Service.Type type) {
    return Csi.PluginCapability.newBuilder()
        .setService(Csi.PluginCapability.Service.newBuilder().setType(type))
        .build();
  }

  @Override
  public void probe(Csi.ProbeRequest request, StreamObserver<Csi.ProbeResponse> observer) {
    reply(
        observer,
        Csi.ProbeResponse.newBuilder().setReady(BoolValue.of(ready.getAsBoolean())).build());
  }
}
