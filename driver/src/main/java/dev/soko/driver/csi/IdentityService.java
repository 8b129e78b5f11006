package dev.soko.driver.csi;

import static dev.soko.driver.csi.Replies.reply;

import com.google.protobuf.BoolValue;
import csi.v1.Csi;
import csi.v1.IdentityGrpc;
import dev.soko.driver.health.Readiness;
import io.grpc.stub.StreamObserver;

/** Identity: name and version, the plugin capabilities, and readiness for Probe. */
public final class IdentityService extends IdentityGrpc.IdentityImplBase {
  private final String driverName;
  private final String version;
  private final Readiness readiness;
  private final boolean groupController;
  private final boolean snapshotMetadata;

  /** An identity for a process that serves no GroupController. */
  public IdentityService(String driverName, String version, Readiness readiness) {
    this(driverName, version, readiness, false);
  }

  /**
   * @param readiness whether the process can serve; in node mode, {@code VolumeManager::notReady}.
   *     {@code /healthz} asks the same instance.
   * @param groupController the process serves the GroupController service (node mode, where the
   *     volumes are; controller mode with the group snapshotter, handing calls to the nodes): only
   *     then is it advertised, since a CO calls what is advertised
   */
  public IdentityService(
      String driverName, String version, Readiness readiness, boolean groupController) {
    this(driverName, version, readiness, groupController, false);
  }

  /**
   * @param snapshotMetadata the process serves the SnapshotMetadata service (changed block
   *     tracking): only the node mode, where the snapshots are, and only where a pool can answer
   */
  public IdentityService(
      String driverName,
      String version,
      Readiness readiness,
      boolean groupController,
      boolean snapshotMetadata) {
    this.driverName = driverName;
    this.version = version;
    this.readiness = readiness;
    this.groupController = groupController;
    this.snapshotMetadata = snapshotMetadata;
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
    Csi.GetPluginCapabilitiesResponse.Builder response =
        Csi.GetPluginCapabilitiesResponse.newBuilder()
            .addCapabilities(service(Csi.PluginCapability.Service.Type.CONTROLLER_SERVICE))
            .addCapabilities(
                service(Csi.PluginCapability.Service.Type.VOLUME_ACCESSIBILITY_CONSTRAINTS));
    if (groupController) {
      response.addCapabilities(service(Csi.PluginCapability.Service.Type.GROUP_CONTROLLER_SERVICE));
    }
    if (snapshotMetadata) {
      response.addCapabilities(
          service(Csi.PluginCapability.Service.Type.SNAPSHOT_METADATA_SERVICE));
    }
    reply(observer, response.build());
  }

  private static Csi.PluginCapability service(Csi.PluginCapability.Service.Type type) {
    return Csi.PluginCapability.newBuilder()
        .setService(Csi.PluginCapability.Service.newBuilder().setType(type))
        .build();
  }

  @Override
  public void probe(Csi.ProbeRequest request, StreamObserver<Csi.ProbeResponse> observer) {
    reply(
        observer, Csi.ProbeResponse.newBuilder().setReady(BoolValue.of(readiness.ready())).build());
  }
}
