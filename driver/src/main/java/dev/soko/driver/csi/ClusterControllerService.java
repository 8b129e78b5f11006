package dev.soko.driver.csi;

import static dev.soko.driver.csi.Replies.reply;

import csi.v1.ControllerGrpc;
import csi.v1.Csi;
import csi.v1.Csi.ControllerServiceCapability.RPC.Type;
import io.grpc.stub.StreamObserver;
import java.util.List;

/**
 * The Controller service of a {@code --mode controller} process, which runs in the cluster-wide
 * Deployment beside the external-resizer and has no pools. Volumes and snapshots are created by the
 * node that owns the pool (distributed provisioning), so the only controller call that reaches this
 * process is ControllerExpandVolume, and the only capability it advertises is EXPAND_VOLUME.
 *
 * <p>Why it does not check the pool's headroom: the pool is a directory on one node, invisible from
 * here, and a cross-node call would add a network dependency the CSI model does not have. The
 * answer is therefore always {@code node_expansion_required=true}: NodeExpandVolume on the owning
 * node checks the headroom, reserves it and grows image, loop device and filesystem, failing with
 * OUT_OF_RANGE or RESOURCE_EXHAUSTED, which the kubelet reports on the PVC. The capacity returned
 * is the size asked for; the node's answer carries the final, rounded size.
 */
public final class ClusterControllerService extends ControllerGrpc.ControllerImplBase {
  static final List<Type> CAPABILITIES = List.of(Type.EXPAND_VOLUME);

  @Override
  public void controllerExpandVolume(
      Csi.ControllerExpandVolumeRequest request,
      StreamObserver<Csi.ControllerExpandVolumeResponse> observer) {
    Requests.requireId(request.getVolumeId(), "volume_id");
    SizeRange size = ExpandChecks.requiredRange(request);
    reply(
        observer,
        Csi.ControllerExpandVolumeResponse.newBuilder()
            .setCapacityBytes(size.target())
            .setNodeExpansionRequired(true)
            .build());
  }

  @Override
  public void controllerGetCapabilities(
      Csi.ControllerGetCapabilitiesRequest request,
      StreamObserver<Csi.ControllerGetCapabilitiesResponse> observer) {
    reply(observer, ControllerService.capabilities(CAPABILITIES));
  }
}
