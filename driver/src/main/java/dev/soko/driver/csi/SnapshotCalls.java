package dev.soko.driver.csi;

import static dev.soko.driver.csi.Replies.reply;

import csi.v1.Csi;
import dev.soko.driver.model.Snapshot;
import dev.soko.driver.volume.SnapshotOperations;
import io.grpc.stub.StreamObserver;

/**
 * CreateSnapshot and DeleteSnapshot, validated and translated the same way whoever carries them
 * out: the node's engine ({@link ControllerService}) or the node the controller hands them to
 * ({@link ClusterControllerService}).
 */
final class SnapshotCalls {
  private SnapshotCalls() {}

  static void create(
      SnapshotOperations snapshots,
      GroupIds groupIds,
      Csi.CreateSnapshotRequest request,
      StreamObserver<Csi.CreateSnapshotResponse> observer) {
    String name = Requests.requireId(request.getName(), "name");
    String source = Requests.requireId(request.getSourceVolumeId(), "source_volume_id");
    Parameters.checkSnapshotParameters(request.getParametersMap());
    Snapshot snapshot = snapshots.createSnapshot(name, source);
    reply(
        observer,
        Csi.CreateSnapshotResponse.newBuilder()
            .setSnapshot(Protos.snapshot(snapshot, groupIds))
            .build());
  }

  static void delete(
      SnapshotOperations snapshots,
      Csi.DeleteSnapshotRequest request,
      StreamObserver<Csi.DeleteSnapshotResponse> observer) {
    snapshots.deleteSnapshot(Requests.requireId(request.getSnapshotId(), "snapshot_id"));
    reply(observer, Csi.DeleteSnapshotResponse.getDefaultInstance());
  }
}
