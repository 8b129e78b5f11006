package dev.soko.driver.csi;

import static dev.soko.driver.csi.Replies.reply;

import csi.v1.ControllerGrpc;
import csi.v1.Csi;
import csi.v1.Csi.ControllerServiceCapability.RPC.Type;
import dev.soko.driver.volume.ExpandResult;
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
 * node carries out (through a NodeRequest, {@code driver/handoff}), as it does growth.
 *
 * <p>ControllerExpandVolume: with a way to the nodes, the growth is handed to the volume's node (a
 * NodeRequest), which checks its pool's headroom, reserves the size and grows the storage and,
 * where it can at once, the filesystem the pod sees; the answer is then the node's, usually {@code
 * node_expansion_required=false}, so the claim shows its new size in seconds rather than at the
 * kubelet's next sync of the pod. Where the node cannot finish it (it does not answer in time, or
 * may not grow the mounted filesystem), and without a way to the nodes at all, the answer is the
 * kubelet's path: {@code node_expansion_required=true} with the size asked for, and
 * NodeExpandVolume on the node checks the headroom and grows image, loop device and filesystem,
 * failing with OUT_OF_RANGE, which the kubelet reports on the PVC.
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

  /**
   * Hands a growth to the volume's node and waits for its answer; empty when the node could not
   * finish it now, so NodeExpandVolume must. Throws a StorageException as the CSI call answers:
   * OUT_OF_RANGE for a shrink or a pool without the room, UNAVAILABLE for a node that is gone.
   */
  @FunctionalInterface
  public interface VolumeExpander {
    Optional<ExpandResult> expand(String volumeId, long requiredBytes, long limitBytes);
  }

  private final Optional<VolumeExpander> expander;
  private final Optional<VolumeModifier> modifier;
  private final Optional<SnapshotOperations> snapshots;

  /** Without API server access: expansion only. */
  public ClusterControllerService() {
    this(Optional.empty(), Optional.empty());
  }

  /** Without growth through the nodes. */
  public ClusterControllerService(
      Optional<VolumeModifier> modifier, Optional<SnapshotOperations> snapshots) {
    this(Optional.empty(), modifier, snapshots);
  }

  /**
   * With a way to the nodes, growth through them and ModifyVolume too (MODIFY_VOLUME is
   * advertised); with the nodes' snapshots, CreateSnapshot and DeleteSnapshot
   * (CREATE_DELETE_SNAPSHOT).
   */
  public ClusterControllerService(
      Optional<VolumeExpander> expander,
      Optional<VolumeModifier> modifier,
      Optional<SnapshotOperations> snapshots) {
    this.expander = expander;
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
    String id = Requests.requireId(request.getVolumeId(), "volume_id");
    SizeRange size = ExpandChecks.requiredRange(request);
    ExpandResult result =
        expander
            .flatMap(e -> e.expand(id, size.requiredBytes(), size.limitBytes()))
            .orElseGet(() -> new ExpandResult(size.target(), true));
    reply(
        observer,
        Csi.ControllerExpandVolumeResponse.newBuilder()
            .setCapacityBytes(result.capacityBytes())
            .setNodeExpansionRequired(result.nodeExpansionRequired())
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
