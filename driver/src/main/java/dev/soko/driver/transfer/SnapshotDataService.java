package dev.soko.driver.transfer;

import dev.soko.data.v1.DataProto.AccessType;
import dev.soko.data.v1.DataProto.Form;
import dev.soko.data.v1.DataProto.ReadReply;
import dev.soko.data.v1.DataProto.ReadRequest;
import dev.soko.data.v1.DataProto.SnapshotFacts;
import dev.soko.data.v1.DataProto.SnapshotRef;
import dev.soko.data.v1.DataProto.TreeReply;
import dev.soko.data.v1.DataProto.VolumeFacts;
import dev.soko.data.v1.DataProto.VolumeRef;
import dev.soko.data.v1.SnapshotDataGrpc;
import dev.soko.driver.backend.CopyForm;
import dev.soko.driver.sys.LinuxSyscalls;
import dev.soko.driver.sys.Syscalls;
import dev.soko.driver.volume.BlockStream;
import dev.soko.driver.volume.ReadCopy;
import dev.soko.driver.volume.SnapshotImage;
import dev.soko.driver.volume.SnapshotImages;
import dev.soko.driver.volume.StorageException;
import dev.soko.driver.volume.VolumeImage;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;

/**
 * This node's side of the data path: what it holds of a snapshot or volume, and the allocated bytes
 * of the snapshot's image or of a point-in-time copy of the volume taken for the read; or, for a
 * pool whose volumes are directories, the snapshot's (or copy's) tree of files. Images are opened
 * read-only; a snapshot read changes nothing in the pool, and a volume read leaves nothing behind
 * (its copy is removed when the stream ends). Failures are {@link StorageException}s, which the
 * server's error boundary turns into codes.
 */
final class SnapshotDataService extends SnapshotDataGrpc.SnapshotDataImplBase {
  private final SnapshotImages images;
  private final String node;
  private final Syscalls syscalls;

  SnapshotDataService(SnapshotImages images, String node) {
    this(images, node, new LinuxSyscalls());
  }

  SnapshotDataService(SnapshotImages images, String node, Syscalls syscalls) {
    this.images = images;
    this.node = node;
    this.syscalls = syscalls;
  }

  @Override
  public void describe(SnapshotRef request, StreamObserver<SnapshotFacts> observer) {
    SnapshotImage image = images.snapshotSource(requireId(request.getSnapshotId()));
    observer.onNext(
        SnapshotFacts.newBuilder()
            .setSnapshotId(image.snapshotId())
            .setSizeBytes(image.sizeBytes())
            .setAccessType(accessType(image.accessType()))
            .setFsType(image.fsType())
            .setNode(node)
            .setForm(form(image.form()))
            .build());
    observer.onCompleted();
  }

  @Override
  public void read(ReadRequest request, StreamObserver<ReadReply> observer) {
    String id = requireId(request.getSnapshotId());
    SnapshotImage image = images.snapshotSource(id);
    if (image.form() != CopyForm.IMAGE) {
      throw StorageException.precondition(
          "snapshot %s of pool %s is a tree of files: it is read with ReadTree", id, image.pool());
    }
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
    ChunkReply.send(
        observer, new ChunkReader("snapshot " + id, ranges, channel), image.sizeBytes());
  }

  @Override
  public void describeVolume(VolumeRef request, StreamObserver<VolumeFacts> observer) {
    VolumeImage volume = images.volumeSource(requireVolumeId(request.getVolumeId()));
    observer.onNext(
        VolumeFacts.newBuilder()
            .setVolumeId(volume.volumeId())
            .setSizeBytes(volume.sizeBytes())
            .setAccessType(accessType(volume.accessType()))
            .setFsType(volume.fsType())
            .setNode(node)
            .setForm(form(volume.form()))
            .build());
    observer.onCompleted();
  }

  /**
   * Streams a copy of the volume taken now; the copy goes when the stream's reader closes, which
   * {@link ChunkReply} does once however the stream ends (complete, failed or cancelled).
   */
  @Override
  public void readVolume(VolumeRef request, StreamObserver<ReadReply> observer) {
    String id = requireVolumeId(request.getVolumeId());
    ReadCopy copy = images.readCopy(id);
    String what = "the read copy of volume " + id;
    FileChannel channel;
    try {
      channel = FileChannel.open(copy.path(), StandardOpenOption.READ);
    } catch (IOException e) {
      copy.blocks().close();
      throw StorageException.internal(
          "cannot open " + what + ": " + e.getClass().getSimpleName(), e);
    }
    ChunkReply.send(
        observer, new ChunkReader(what, copy.blocks(), channel), copy.volume().sizeBytes());
  }

  /** Streams the snapshot's tree of files; see {@link TreeReader}. */
  @Override
  public void readTree(SnapshotRef request, StreamObserver<TreeReply> observer) {
    TreeReader.send(observer, images.snapshotTree(requireId(request.getSnapshotId())), syscalls);
  }

  /**
   * Streams a read-only snapshot of the volume taken now; it goes when the stream's reader closes,
   * however the stream ends.
   */
  @Override
  public void readVolumeTree(VolumeRef request, StreamObserver<TreeReply> observer) {
    TreeReader.send(observer, images.volumeTree(requireVolumeId(request.getVolumeId())), syscalls);
  }

  private static Form form(CopyForm form) {
    return switch (form) {
      case IMAGE -> Form.FORM_IMAGE;
      case FILE_TREE -> Form.FORM_FILE_TREE;
    };
  }

  private static AccessType accessType(dev.soko.driver.model.AccessType type) {
    return switch (type) {
      case BLOCK -> AccessType.BLOCK;
      case FILESYSTEM -> AccessType.MOUNT;
    };
  }

  private static String requireVolumeId(String id) {
    if (id.isEmpty()) {
      throw StorageException.invalid("volume_id is required");
    }
    return id;
  }

  private static String requireId(String id) {
    if (id.isEmpty()) {
      throw StorageException.invalid("snapshot_id is required");
    }
    return id;
  }
}
