package dev.soko.driver.transfer;

import dev.soko.data.v1.DataProto.AccessType;
import dev.soko.data.v1.DataProto.ReadReply;
import dev.soko.data.v1.DataProto.ReadRequest;
import dev.soko.data.v1.DataProto.SnapshotFacts;
import dev.soko.data.v1.DataProto.SnapshotRef;
import dev.soko.data.v1.SnapshotDataGrpc;
import dev.soko.driver.volume.BlockStream;
import dev.soko.driver.volume.SnapshotImage;
import dev.soko.driver.volume.SnapshotImages;
import dev.soko.driver.volume.StorageException;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;

/**
 * This node's side of the data path: what it holds of a snapshot, and the snapshot image's
 * allocated bytes. The image is opened read-only; nothing in the pool changes because of a read.
 * Failures are {@link StorageException}s, which the server's error boundary turns into codes.
 */
final class SnapshotDataService extends SnapshotDataGrpc.SnapshotDataImplBase {
  private final SnapshotImages images;
  private final String node;

  SnapshotDataService(SnapshotImages images, String node) {
    this.images = images;
    this.node = node;
  }

  @Override
  public void describe(SnapshotRef request, StreamObserver<SnapshotFacts> observer) {
    SnapshotImage image = images.snapshotImage(requireId(request.getSnapshotId()));
    observer.onNext(
        SnapshotFacts.newBuilder()
            .setSnapshotId(image.snapshotId())
            .setSizeBytes(image.sizeBytes())
            .setAccessType(
                switch (image.accessType()) {
                  case BLOCK -> AccessType.BLOCK;
                  case FILESYSTEM -> AccessType.MOUNT;
                })
            .setFsType(image.fsType())
            .setNode(node)
            .build());
    observer.onCompleted();
  }

  @Override
  public void read(ReadRequest request, StreamObserver<ReadReply> observer) {
    String id = requireId(request.getSnapshotId());
    SnapshotImage image = images.snapshotImage(id);
    BlockStream ranges = images.allocatedBlocks(id, request.getStartingOffset());
    FileChannel channel;
    try {
      channel = FileChannel.open(image.path(), StandardOpenOption.READ);
    } catch (IOException e) {
      try {
        ranges.checkPresent();
      } finally {
        ranges.close();
      }
      throw StorageException.internal(
          "cannot open the image of snapshot " + id + ": " + e.getClass().getSimpleName(), e);
    }
    ChunkReply.send(observer, new ChunkReader(id, ranges, channel), image.sizeBytes());
  }

  private static String requireId(String id) {
    if (id.isEmpty()) {
      throw StorageException.invalid("snapshot_id is required");
    }
    return id;
  }
}
