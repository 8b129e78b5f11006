package dev.soko.driver.csi;

import static dev.soko.driver.csi.Replies.reply;

import csi.v1.Csi;
import csi.v1.Csi.NodeServiceCapability.RPC.Type;
import csi.v1.NodeGrpc;
import dev.soko.driver.attribute.NodeSecrets;
import dev.soko.driver.mount.MountException;
import dev.soko.driver.mount.PathPolicy;
import dev.soko.driver.volume.PublishRequest;
import dev.soko.driver.volume.StageRequest;
import dev.soko.driver.volume.StorageException;
import dev.soko.driver.volume.VolumeManager;
import dev.soko.driver.volume.VolumeUsage;
import io.grpc.stub.StreamObserver;
import java.nio.file.Path;
import java.util.List;

/**
 * The Node service. Every path passes {@link PathPolicy} before the engine sees it; secrets,
 * publish_context and volume_context are not read (the engine derives everything from its own
 * records), so nothing a CO passes there can steer a mount.
 */
public final class NodeService extends NodeGrpc.NodeImplBase {
  static final String POD_UID = "csi.storage.k8s.io/pod.uid";

  static final List<Type> CAPABILITIES =
      List.of(
          Type.STAGE_UNSTAGE_VOLUME,
          Type.GET_VOLUME_STATS,
          Type.EXPAND_VOLUME,
          Type.VOLUME_CONDITION,
          Type.SINGLE_NODE_MULTI_WRITER);

  private final VolumeManager volumes;
  private final Topology topology;
  private final String nodeId;
  private final PathPolicy paths;

  public NodeService(VolumeManager volumes, String nodeId, PathPolicy paths) {
    this.volumes = volumes;
    this.nodeId = nodeId;
    this.topology = new Topology(nodeId);
    this.paths = paths;
  }

  @Override
  public void nodeStageVolume(
      Csi.NodeStageVolumeRequest request, StreamObserver<Csi.NodeStageVolumeResponse> observer) {
    String id = Requests.requireId(request.getVolumeId(), "volume_id");
    Path staging = paths.check("staging_target_path", request.getStagingTargetPath());
    Capabilities.Parsed cap =
        requiredCapability(request.hasVolumeCapability(), request.getVolumeCapability());
    // The node-stage Secret's fields (an encrypted volume's key): never logged, never in a reply.
    Requests.checkMap(request.getSecretsMap(), "secrets");
    volumes.stage(
        new StageRequest(
            id,
            staging,
            cap.accessType(),
            cap.fsType(),
            cap.mountFlags(),
            NodeSecrets.of(request.getSecretsMap())));
    reply(observer, Csi.NodeStageVolumeResponse.getDefaultInstance());
  }

  @Override
  public void nodeUnstageVolume(
      Csi.NodeUnstageVolumeRequest request,
      StreamObserver<Csi.NodeUnstageVolumeResponse> observer) {
    String id = Requests.requireId(request.getVolumeId(), "volume_id");
    volumes.unstage(id, paths.check("staging_target_path", request.getStagingTargetPath()));
    reply(observer, Csi.NodeUnstageVolumeResponse.getDefaultInstance());
  }

  @Override
  public void nodePublishVolume(
      Csi.NodePublishVolumeRequest request,
      StreamObserver<Csi.NodePublishVolumeResponse> observer) {
    String id = Requests.requireId(request.getVolumeId(), "volume_id");
    Path target = paths.check("target_path", request.getTargetPath());
    // STAGE_UNSTAGE_VOLUME is advertised, so the CO must have staged the volume first.
    Path staging = paths.check("staging_target_path", request.getStagingTargetPath());
    Capabilities.Parsed cap =
        requiredCapability(request.hasVolumeCapability(), request.getVolumeCapability());
    boolean readOnly = request.getReadonly() || cap.readOnly();
    // The kubelet's pod info (podInfoOnMount): the pod whose cgroups get the volume's IO limits.
    String podUid = request.getVolumeContextMap().getOrDefault(POD_UID, "");
    volumes.publish(
        new PublishRequest(
            id, staging, target, readOnly, cap.accessType(), cap.mountFlags(), podUid));
    reply(observer, Csi.NodePublishVolumeResponse.getDefaultInstance());
  }

  @Override
  public void nodeUnpublishVolume(
      Csi.NodeUnpublishVolumeRequest request,
      StreamObserver<Csi.NodeUnpublishVolumeResponse> observer) {
    String id = Requests.requireId(request.getVolumeId(), "volume_id");
    volumes.unpublish(id, paths.check("target_path", request.getTargetPath()));
    reply(observer, Csi.NodeUnpublishVolumeResponse.getDefaultInstance());
  }

  @Override
  public void nodeGetVolumeStats(
      Csi.NodeGetVolumeStatsRequest request,
      StreamObserver<Csi.NodeGetVolumeStatsResponse> observer) {
    String id = Requests.requireId(request.getVolumeId(), "volume_id");
    VolumeUsage usage = volumes.usage(id, lookupPath(request.getVolumePath(), id));
    Csi.NodeGetVolumeStatsResponse.Builder response =
        Csi.NodeGetVolumeStatsResponse.newBuilder()
            .addUsage(
                Csi.VolumeUsage.newBuilder()
                    .setUnit(Csi.VolumeUsage.Unit.BYTES)
                    .setTotal(usage.totalBytes())
                    .setUsed(usage.usedBytes())
                    .setAvailable(usage.availableBytes()))
            .setVolumeCondition(Protos.condition(usage.condition()));
    // A block volume has no inodes; reporting zeros would read as "inodes exhausted".
    if (usage.totalInodes() > 0) {
      response.addUsage(
          Csi.VolumeUsage.newBuilder()
              .setUnit(Csi.VolumeUsage.Unit.INODES)
              .setTotal(usage.totalInodes())
              .setUsed(usage.usedInodes())
              .setAvailable(usage.availableInodes()));
    }
    reply(observer, response.build());
  }

  @Override
  public void nodeExpandVolume(
      Csi.NodeExpandVolumeRequest request, StreamObserver<Csi.NodeExpandVolumeResponse> observer) {
    String id = Requests.requireId(request.getVolumeId(), "volume_id");
    Path volumePath = lookupPath(request.getVolumePath(), id);
    SizeRange size =
        request.hasCapacityRange() ? SizeRange.of(request.getCapacityRange()) : SizeRange.UNSET;
    if (request.hasVolumeCapability()) {
      Capabilities.parse(request.getVolumeCapability());
    }
    long capacity = volumes.expandOnNode(id, volumePath, size.requiredBytes(), size.limitBytes());
    reply(observer, Csi.NodeExpandVolumeResponse.newBuilder().setCapacityBytes(capacity).build());
  }

  @Override
  public void nodeGetCapabilities(
      Csi.NodeGetCapabilitiesRequest request,
      StreamObserver<Csi.NodeGetCapabilitiesResponse> observer) {
    Csi.NodeGetCapabilitiesResponse.Builder response = Csi.NodeGetCapabilitiesResponse.newBuilder();
    for (Type type : CAPABILITIES) {
      response.addCapabilities(
          Csi.NodeServiceCapability.newBuilder()
              .setRpc(Csi.NodeServiceCapability.RPC.newBuilder().setType(type)));
    }
    reply(observer, response.build());
  }

  @Override
  public void nodeGetInfo(
      Csi.NodeGetInfoRequest request, StreamObserver<Csi.NodeGetInfoResponse> observer) {
    reply(
        observer,
        Csi.NodeGetInfoResponse.newBuilder()
            .setNodeId(nodeId)
            .setMaxVolumesPerNode(volumes.maxVolumesPerNode())
            .setAccessibleTopology(topology.segment())
            .build());
  }

  /**
   * Checks a {@code volume_path} that only names where the CO believes a volume is (stats, node
   * expansion). The driver stages and publishes only below the allowed roots, so a path that fails
   * the policy cannot hold the volume: the spec's answer is NOT_FOUND, not INVALID_ARGUMENT.
   */
  private Path lookupPath(String raw, String volumeId) {
    if (raw.isEmpty()) {
      throw StorageException.invalid("volume_path is required");
    }
    try {
      return paths.check("volume_path", raw);
    } catch (MountException e) {
      throw StorageException.notFound(
          "volume %s is not staged or published at the given volume_path (%s)",
          volumeId, e.getMessage());
    }
  }

  private static Capabilities.Parsed requiredCapability(
      boolean present, Csi.VolumeCapability capability) {
    if (!present) {
      throw StorageException.invalid("volume_capability is required");
    }
    return Capabilities.parse(capability);
  }
}
