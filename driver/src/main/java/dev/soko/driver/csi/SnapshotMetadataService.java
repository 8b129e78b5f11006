package dev.soko.driver.csi;

import csi.v1.Csi;
import csi.v1.SnapshotMetadataGrpc;
import dev.soko.driver.extent.ByteRange;
import dev.soko.driver.volume.BlockStream;
import dev.soko.driver.volume.SnapshotBlocks;
import dev.soko.driver.volume.StorageException;
import io.grpc.stub.StreamObserver;
import java.util.List;

/**
 * Changed block tracking (CSI SnapshotMetadata): the allocated ranges of a snapshot and the ranges
 * that differ between two snapshots of one volume, as byte extents of the volume's block device
 * (variable length, the form a filesystem's extent map has). Answers stream at the pace the client
 * reads ({@link dev.soko.driver.server.PacedReply}), so a large volume costs one batch of memory.
 */
public final class SnapshotMetadataService extends SnapshotMetadataGrpc.SnapshotMetadataImplBase {
  /** Ranges per message when the client leaves it to the plugin: about 24 KiB of message. */
  static final int DEFAULT_RESULTS = 1024;

  /** The most ranges per message whatever the client asks: a bound on one batch's memory. */
  static final int MOST_RESULTS = 4096;

  private final SnapshotBlocks blocks;

  public SnapshotMetadataService(SnapshotBlocks blocks) {
    this.blocks = blocks;
  }

  @Override
  public void getMetadataAllocated(
      Csi.GetMetadataAllocatedRequest request,
      StreamObserver<Csi.GetMetadataAllocatedResponse> observer) {
    String snapshot = Requests.requireId(request.getSnapshotId(), "snapshot_id");
    Requests.checkMap(request.getSecretsMap(), "secrets");
    int max = maxResults(request.getMaxResults());
    BlockStream stream = blocks.allocatedBlocks(snapshot, request.getStartingOffset());
    BlockStreamReply.send(
        observer,
        stream,
        max,
        ranges ->
            Csi.GetMetadataAllocatedResponse.newBuilder()
                .setBlockMetadataType(Csi.BlockMetadataType.VARIABLE_LENGTH)
                .setVolumeCapacityBytes(stream.capacityBytes())
                .addAllBlockMetadata(metadata(ranges))
                .build());
  }

  @Override
  public void getMetadataDelta(
      Csi.GetMetadataDeltaRequest request, StreamObserver<Csi.GetMetadataDeltaResponse> observer) {
    String base = Requests.requireId(request.getBaseSnapshotId(), "base_snapshot_id");
    String target = Requests.requireId(request.getTargetSnapshotId(), "target_snapshot_id");
    Requests.checkMap(request.getSecretsMap(), "secrets");
    int max = maxResults(request.getMaxResults());
    BlockStream stream = blocks.changedBlocks(base, target, request.getStartingOffset());
    BlockStreamReply.send(
        observer,
        stream,
        max,
        ranges ->
            Csi.GetMetadataDeltaResponse.newBuilder()
                .setBlockMetadataType(Csi.BlockMetadataType.VARIABLE_LENGTH)
                .setVolumeCapacityBytes(stream.capacityBytes())
                .addAllBlockMetadata(metadata(ranges))
                .build());
  }

  static int maxResults(int requested) {
    if (requested < 0) {
      throw StorageException.invalid("max_results must not be negative, got %d", requested);
    }
    return requested == 0 ? DEFAULT_RESULTS : Math.min(requested, MOST_RESULTS);
  }

  private static List<Csi.BlockMetadata> metadata(List<ByteRange> ranges) {
    return ranges.stream()
        .map(
            r ->
                Csi.BlockMetadata.newBuilder()
                    .setByteOffset(r.offset())
                    .setSizeBytes(r.length())
                    .build())
        .toList();
  }
}
