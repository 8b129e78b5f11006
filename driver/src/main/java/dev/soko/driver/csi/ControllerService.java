package dev.soko.driver.csi;

import static dev.soko.driver.csi.Replies.reply;

import csi.v1.ControllerGrpc;
import csi.v1.Csi;
import csi.v1.Csi.ControllerServiceCapability.RPC.Type;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.model.ContentSource;
import dev.soko.driver.model.Snapshot;
import dev.soko.driver.model.Volume;
import dev.soko.driver.volume.ExpandResult;
import dev.soko.driver.volume.Page;
import dev.soko.driver.volume.SnapshotFilter;
import dev.soko.driver.volume.StorageException;
import dev.soko.driver.volume.VolumeManager;
import dev.soko.driver.volume.VolumeRequest;
import io.grpc.stub.StreamObserver;
import java.util.List;

/**
 * The Controller service of a node-mode process: volumes and snapshots of this node's pools. It
 * validates and translates; the engine decides. ControllerPublish/Unpublish are not advertised and
 * answer UNIMPLEMENTED (the generated base class does that).
 */
public final class ControllerService extends ControllerGrpc.ControllerImplBase {
  static final List<Type> CAPABILITIES =
      List.of(
          Type.CREATE_DELETE_VOLUME,
          Type.CREATE_DELETE_SNAPSHOT,
          Type.LIST_VOLUMES,
          Type.LIST_SNAPSHOTS,
          Type.GET_CAPACITY,
          Type.CLONE_VOLUME,
          Type.EXPAND_VOLUME,
          Type.GET_VOLUME,
          Type.VOLUME_CONDITION,
          Type.MODIFY_VOLUME,
          Type.SINGLE_NODE_MULTI_WRITER);

  private final VolumeManager volumes;
  private final Topology topology;
  private final CapacityQuery capacity;
  private final GroupIds groupIds;

  public ControllerService(
      VolumeManager volumes, Topology topology, PoolFsTypes pools, GroupIds groupIds) {
    this.volumes = volumes;
    this.topology = topology;
    this.capacity = new CapacityQuery(volumes, topology, pools);
    this.groupIds = groupIds;
  }

  @Override
  public void createVolume(
      Csi.CreateVolumeRequest request, StreamObserver<Csi.CreateVolumeResponse> observer) {
    String name = Requests.requireId(request.getName(), "name");
    List<Capabilities.Parsed> caps = Capabilities.parseAll(request.getVolumeCapabilitiesList());
    AccessType accessType = caps.get(0).accessType();
    if (caps.stream().anyMatch(cap -> cap.accessType() != accessType)) {
      throw StorageException.invalid("volume_capabilities mix block and mount access");
    }
    Parameters parameters =
        Parameters.parse(request.getParametersMap(), volumes.attributeParameters());
    SizeRange size = SizeRange.of(request.getCapacityRange());
    String fsType = accessType == AccessType.BLOCK ? "" : fsType(caps, parameters);
    if (request.hasAccessibilityRequirements()
        && !topology.accepts(request.getAccessibilityRequirements())) {
      throw StorageException.exhausted(
          "accessibility_requirements exclude this node; volumes are created on the node that"
              + " owns the pool");
    }
    ContentSource source = contentSource(request);
    Volume volume =
        volumes.createVolume(
            new VolumeRequest(
                name,
                size.requiredBytes(),
                size.limitBytes(),
                parameters.pool(),
                accessType,
                fsType,
                source,
                parameters.recognised(),
                request.getMutableParamsMap()));
    reply(
        observer,
        Csi.CreateVolumeResponse.newBuilder().setVolume(Protos.volume(volume, topology)).build());
  }

  /** One filesystem type for all capabilities and the {@code fsType} parameter, or refused. */
  private static String fsType(List<Capabilities.Parsed> caps, Parameters parameters) {
    String chosen = parameters.fsType();
    for (Capabilities.Parsed cap : caps) {
      if (cap.fsType().isEmpty()) {
        continue;
      }
      if (!chosen.isEmpty() && !chosen.equals(cap.fsType())) {
        throw StorageException.invalid(
            "conflicting filesystem types '%s' and '%s'", chosen, cap.fsType());
      }
      chosen = cap.fsType();
    }
    return chosen;
  }

  private static ContentSource contentSource(Csi.CreateVolumeRequest request) {
    if (!request.hasVolumeContentSource()) {
      return ContentSource.EMPTY;
    }
    Csi.VolumeContentSource source = request.getVolumeContentSource();
    if (source.hasSnapshot()) {
      return new ContentSource.FromSnapshot(
          Requests.requireId(source.getSnapshot().getSnapshotId(), "source snapshot_id"));
    }
    if (source.hasVolume()) {
      return new ContentSource.FromVolume(
          Requests.requireId(source.getVolume().getVolumeId(), "source volume_id"));
    }
    throw StorageException.invalid("volume_content_source must name a snapshot or a volume");
  }

  @Override
  public void deleteVolume(
      Csi.DeleteVolumeRequest request, StreamObserver<Csi.DeleteVolumeResponse> observer) {
    volumes.deleteVolume(Requests.requireId(request.getVolumeId(), "volume_id"));
    reply(observer, Csi.DeleteVolumeResponse.getDefaultInstance());
  }

  @Override
  public void validateVolumeCapabilities(
      Csi.ValidateVolumeCapabilitiesRequest request,
      StreamObserver<Csi.ValidateVolumeCapabilitiesResponse> observer) {
    String id = Requests.requireId(request.getVolumeId(), "volume_id");
    if (request.getVolumeCapabilitiesCount() == 0) {
      throw StorageException.invalid("volume_capabilities is required");
    }
    Requests.checkMap(request.getVolumeContextMap(), "volume_context");
    Volume volume = existingVolume(id);
    reply(observer, CapabilityCheck.validate(volume, request, volumes.attributeParameters()));
  }

  @Override
  public void listVolumes(
      Csi.ListVolumesRequest request, StreamObserver<Csi.ListVolumesResponse> observer) {
    Page<Volume> page =
        volumes.listVolumes(
            Requests.token(request.getStartingToken()),
            Requests.maxEntries(request.getMaxEntries()));
    Csi.ListVolumesResponse.Builder response =
        Csi.ListVolumesResponse.newBuilder().setNextToken(page.nextToken());
    for (Volume volume : page.items()) {
      response.addEntries(
          Csi.ListVolumesResponse.Entry.newBuilder()
              .setVolume(Protos.volume(volume, topology))
              .setStatus(
                  Csi.ListVolumesResponse.VolumeStatus.newBuilder()
                      .setVolumeCondition(Protos.condition(volume.condition()))));
    }
    reply(observer, response.build());
  }

  @Override
  public void controllerGetVolume(
      Csi.ControllerGetVolumeRequest request,
      StreamObserver<Csi.ControllerGetVolumeResponse> observer) {
    String id = Requests.requireId(request.getVolumeId(), "volume_id");
    Volume volume = existingVolume(id);
    reply(
        observer,
        Csi.ControllerGetVolumeResponse.newBuilder()
            .setVolume(Protos.volume(volume, topology))
            .setStatus(
                Csi.ControllerGetVolumeResponse.VolumeStatus.newBuilder()
                    .setVolumeCondition(Protos.condition(volume.condition())))
            .build());
  }

  @Override
  public void getCapacity(
      Csi.GetCapacityRequest request, StreamObserver<Csi.GetCapacityResponse> observer) {
    reply(observer, capacity.answer(request));
  }

  /**
   * Replaces the volume's mutable parameters (its IO limits) on this node, which owns it; the pods
   * it is published to get the new limits at once. The cluster's ModifyVolume arrives at the
   * controller-mode driver, which hands it here through a NodeRequest ({@code driver/handoff}).
   */
  @Override
  public void controllerModifyVolume(
      Csi.ControllerModifyVolumeRequest request,
      StreamObserver<Csi.ControllerModifyVolumeResponse> observer) {
    String id = Requests.requireId(request.getVolumeId(), "volume_id");
    volumes.modifyVolume(id, request.getMutableParamsMap());
    reply(observer, Csi.ControllerModifyVolumeResponse.getDefaultInstance());
  }

  @Override
  public void controllerGetCapabilities(
      Csi.ControllerGetCapabilitiesRequest request,
      StreamObserver<Csi.ControllerGetCapabilitiesResponse> observer) {
    reply(observer, capabilities(CAPABILITIES));
  }

  /** The volume a request names, or NOT_FOUND (the id passed {@link Requests#requireId}). */
  private Volume existingVolume(String id) {
    return volumes
        .findVolume(id)
        .orElseThrow(() -> StorageException.notFound("volume %s does not exist", id));
  }

  static Csi.ControllerGetCapabilitiesResponse capabilities(List<Type> types) {
    Csi.ControllerGetCapabilitiesResponse.Builder response =
        Csi.ControllerGetCapabilitiesResponse.newBuilder();
    for (Type type : types) {
      response.addCapabilities(
          Csi.ControllerServiceCapability.newBuilder()
              .setRpc(Csi.ControllerServiceCapability.RPC.newBuilder().setType(type)));
    }
    return response.build();
  }

  @Override
  public void createSnapshot(
      Csi.CreateSnapshotRequest request, StreamObserver<Csi.CreateSnapshotResponse> observer) {
    SnapshotCalls.create(volumes, groupIds, request, observer);
  }

  @Override
  public void deleteSnapshot(
      Csi.DeleteSnapshotRequest request, StreamObserver<Csi.DeleteSnapshotResponse> observer) {
    SnapshotCalls.delete(volumes, request, observer);
  }

  @Override
  public void listSnapshots(
      Csi.ListSnapshotsRequest request, StreamObserver<Csi.ListSnapshotsResponse> observer) {
    SnapshotFilter filter =
        new SnapshotFilter(
            Requests.optionalId(request.getSnapshotId(), "snapshot_id"),
            Requests.optionalId(request.getSourceVolumeId(), "source_volume_id"));
    Page<Snapshot> page =
        volumes.listSnapshots(
            filter,
            Requests.token(request.getStartingToken()),
            Requests.maxEntries(request.getMaxEntries()));
    Csi.ListSnapshotsResponse.Builder response =
        Csi.ListSnapshotsResponse.newBuilder().setNextToken(page.nextToken());
    for (Snapshot snapshot : page.items()) {
      response.addEntries(
          Csi.ListSnapshotsResponse.Entry.newBuilder()
              .setSnapshot(Protos.snapshot(snapshot, groupIds)));
    }
    reply(observer, response.build());
  }

  @Override
  public void controllerExpandVolume(
      Csi.ControllerExpandVolumeRequest request,
      StreamObserver<Csi.ControllerExpandVolumeResponse> observer) {
    String id = Requests.requireId(request.getVolumeId(), "volume_id");
    SizeRange size = ExpandChecks.requiredRange(request);
    ExpandResult result = volumes.expandVolume(id, size.requiredBytes(), size.limitBytes());
    reply(
        observer,
        Csi.ControllerExpandVolumeResponse.newBuilder()
            .setCapacityBytes(result.capacityBytes())
            .setNodeExpansionRequired(result.nodeExpansionRequired())
            .build());
  }
}
