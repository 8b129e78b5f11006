package dev.soko.driver.csi;

import static dev.soko.driver.csi.Replies.reply;

import csi.v1.ControllerGrpc;
import csi.v1.Csi;
import csi.v1.Csi.ControllerServiceCapability.RPC.Type;
import dev.soko.driver.volume.SnapshotOperations;
import dev.soko.driver.volume.StorageException;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The Controller service of a {@code --mode controller} process, which runs in the cluster-wide
 * Deployment beside the external-resizer and has no pools. Volumes and snapshots are created by the
 * node that owns the pool (distributed provisioning), so the only controller calls that reach this
 * process are ControllerExpandVolume and, with API server access, ControllerModifyVolume and (where
 * the operator deploys the group snapshotter) CreateSnapshot and DeleteSnapshot, which the owning
 * node carries out (through a NodeRequest, {@code driver/handoff}).
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

  /**
   * Carries a ModifyVolume to the node that owns the volume and waits for its answer; throws a
   * StorageException: INVALID_ARGUMENT when the node refused, NOT_FOUND for a volume no PV holds,
   * UNAVAILABLE while the node has not answered (the resizer retries).
   */
  @FunctionalInterface
  public interface VolumeModifier {
    void modify(String volumeId, Map<String, String> mutableParameters);
  }

  private final Optional<VolumeModifier> modifier;
  private final Optional<SnapshotOperations> snapshots;

  /** Without API server access: expansion only. */
  public ClusterControllerService() {
    this(Optional.empty(), Optional.empty());
  }

  /**
   * With a way to the nodes, ModifyVolume too (MODIFY_VOLUME is advertised); with the nodes'
   * snapshots, CreateSnapshot and DeleteSnapshot (CREATE_DELETE_SNAPSHOT).
   */
  public ClusterControllerService(
      Optional<VolumeModifier> modifier, Optional<SnapshotOperations> snapshots) {
    this.modifier = modifier;
    this.snapshots = snapshots;
  }

  @Override
  public void createSnapshot(
      Csi.CreateSnapshotRequest request, StreamObserver<Csi.CreateSnapshotResponse> observer) {
    if (snapshots.isEmpty()) {
      super.createSnapshot(request, observer); // UNIMPLEMENTED, as not advertised
      return;
    }
    SnapshotCalls.create(snapshots.get(), GroupIds.AS_KEPT, request, observer);
  }

  @Override
  public void deleteSnapshot(
      Csi.DeleteSnapshotRequest request, StreamObserver<Csi.DeleteSnapshotResponse> observer) {
    if (snapshots.isEmpty()) {
      super.deleteSnapshot(request, observer);
      return;
    }
    SnapshotCalls.delete(snapshots.get(), request, observer);
  }

  @Override
  public void controllerModifyVolume(
      Csi.ControllerModifyVolumeRequest request,
      StreamObserver<Csi.ControllerModifyVolumeResponse> observer) {
    String id = Requests.requireId(request.getVolumeId(), "volume_id");
    modifier
        .orElseThrow(
            () ->
                new StorageException(
                    StorageException.Reason.UNAVAILABLE,
                    "ModifyVolume needs the API server, which this driver cannot reach"))
        .modify(id, request.getMutableParamsMap());
    reply(observer, Csi.ControllerModifyVolumeResponse.getDefaultInstance());
  }

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
    List<Type> types = new ArrayList<>(CAPABILITIES);
    if (modifier.isPresent()) {
      types.add(Type.MODIFY_VOLUME);
    }
    if (snapshots.isPresent()) {
      types.add(Type.CREATE_DELETE_SNAPSHOT);
    }
    reply(observer, ControllerService.capabilities(types));
  }
}
