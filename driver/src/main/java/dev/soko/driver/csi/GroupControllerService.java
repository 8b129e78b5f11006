package dev.soko.driver.csi;

import static dev.soko.driver.csi.Replies.reply;

import csi.v1.Csi;
import csi.v1.Csi.GroupControllerServiceCapability.RPC.Type;
import csi.v1.GroupControllerGrpc;
import dev.soko.driver.model.GroupSnapshot;
import dev.soko.driver.volume.SnapshotOperations;
import dev.soko.driver.volume.StorageException;
import io.grpc.stub.StreamObserver;
import java.util.List;

/**
 * The GroupController service: volume group snapshots, several volumes frozen and copied together
 * (on a node, volumes of one of its pools; through the controller, volumes on any nodes). It
 * validates and translates; the node's engine decides (one pool, idempotency, the members, whether
 * each member can be held at the group's instant), directly in a node-mode process, through a
 * NodeRequest to the volumes' node in the controller-mode one.
 */
public final class GroupControllerService extends GroupControllerGrpc.GroupControllerImplBase {
  private final SnapshotOperations volumes;
  private final GroupIds groupIds;

  public GroupControllerService(SnapshotOperations volumes, GroupIds groupIds) {
    this.volumes = volumes;
    this.groupIds = groupIds;
  }

  @Override
  public void groupControllerGetCapabilities(
      Csi.GroupControllerGetCapabilitiesRequest request,
      StreamObserver<Csi.GroupControllerGetCapabilitiesResponse> observer) {
    reply(
        observer,
        Csi.GroupControllerGetCapabilitiesResponse.newBuilder()
            .addCapabilities(
                Csi.GroupControllerServiceCapability.newBuilder()
                    .setRpc(
                        Csi.GroupControllerServiceCapability.RPC
                            .newBuilder()
                            .setType(Type.CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT)))
            .build());
  }

  @Override
  public void createVolumeGroupSnapshot(
      Csi.CreateVolumeGroupSnapshotRequest request,
      StreamObserver<Csi.CreateVolumeGroupSnapshotResponse> observer) {
    String name = Requests.requireId(request.getName(), "name");
    List<String> sources = ids(request.getSourceVolumeIdsList(), "source_volume_ids");
    if (sources.isEmpty()) {
      throw StorageException.invalid("source_volume_ids is required");
    }
    Parameters.checkGroupSnapshotParameters(request.getParametersMap());
    GroupSnapshot group = volumes.createGroupSnapshot(name, sources);
    reply(
        observer,
        Csi.CreateVolumeGroupSnapshotResponse.newBuilder()
            .setGroupSnapshot(Protos.groupSnapshot(group, groupIds))
            .build());
  }

  @Override
  public void getVolumeGroupSnapshot(
      Csi.GetVolumeGroupSnapshotRequest request,
      StreamObserver<Csi.GetVolumeGroupSnapshotResponse> observer) {
    String id =
        groupIds.kept(Requests.requireId(request.getGroupSnapshotId(), "group_snapshot_id"));
    List<String> members = ids(request.getSnapshotIdsList(), "snapshot_ids");
    GroupSnapshot group = volumes.getGroupSnapshot(id, members);
    reply(
        observer,
        Csi.GetVolumeGroupSnapshotResponse.newBuilder()
            .setGroupSnapshot(Protos.groupSnapshot(group, groupIds))
            .build());
  }

  @Override
  public void deleteVolumeGroupSnapshot(
      Csi.DeleteVolumeGroupSnapshotRequest request,
      StreamObserver<Csi.DeleteVolumeGroupSnapshotResponse> observer) {
    String id =
        groupIds.kept(Requests.requireId(request.getGroupSnapshotId(), "group_snapshot_id"));
    volumes.deleteGroupSnapshot(id, ids(request.getSnapshotIdsList(), "snapshot_ids"));
    reply(observer, Csi.DeleteVolumeGroupSnapshotResponse.getDefaultInstance());
  }

  /** A list of IDs, each checked like any ID, and no longer than a map may be. */
  private static List<String> ids(List<String> values, String field) {
    if (values.size() > Requests.MAX_MAP_ENTRIES) {
      throw StorageException.invalid(
          "%s has more than %d entries", field, Requests.MAX_MAP_ENTRIES);
    }
    return values.stream().map(value -> Requests.requireId(value, field + " entry")).toList();
  }
}
