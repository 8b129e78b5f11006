package dev.soko.driver.transfer;

import dev.soko.data.v1.DataProto.ReadReply;
import dev.soko.data.v1.DataProto.ReadRequest;
import dev.soko.data.v1.DataProto.VolumeRef;
import dev.soko.data.v1.SnapshotDataGrpc;
import dev.soko.driver.volume.StorageException;
import io.grpc.Status;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A snapshot (or volume) as another node described it, copied by streaming its Read (or
 * ReadVolume): each chunk written at its offset (holes stay holes), checked as {@link ChunkCheck}
 * says, the file set to the described size and synced only after the stream's End. A stream cut on
 * the way is followed by another ({@link Resumes}): a snapshot's from the end of the last chunk
 * that passed its check, since a snapshot never changes; a volume's from the start, into an emptied
 * file, since each ReadVolume is a copy of another instant and two instants never mix.
 */
final class StreamedSnapshot extends StreamedCopy {
  private static final Logger LOG = LoggerFactory.getLogger(StreamedSnapshot.class);

  /** Opens the stream of an image's chunks on a node's data port, from an offset. */
  @FunctionalInterface
  interface Opening {
    Iterator<ReadReply> open(SnapshotDataGrpc.SnapshotDataBlockingStub stub, long from);
  }

  private final Opening opening;

  /** Another node's snapshot, read with Read from its start. */
  static StreamedSnapshot snapshot(StreamSource source) {
    return new StreamedSnapshot(
        source,
        (stub, from) ->
            stub.read(
                ReadRequest.newBuilder()
                    .setSnapshotId(source.id())
                    .setStartingOffset(from)
                    .build()));
  }

  /** Another node's volume, read with ReadVolume: a copy of it taken when the stream starts. */
  static StreamedSnapshot volume(StreamSource source) {
    return new StreamedSnapshot(
        source,
        (stub, from) -> stub.readVolume(VolumeRef.newBuilder().setVolumeId(source.id()).build()));
  }

  private StreamedSnapshot(StreamSource source, Opening opening) {
    super(source);
    this.opening = opening;
  }

  @Override
  public void copyTo(Path target) {
    String what = "copy of " + shown();
    long sizeBytes = sizeBytes();
    try {
      Files.createFile(target);
    } catch (IOException e) {
      throw StorageException.internal(
          what + ": cannot create its file: " + e.getClass().getSimpleName(), e);
    }
    try (RandomAccessFile file = new RandomAccessFile(target.toFile(), "rw")) {
      FileChannel out = file.getChannel();
      // The full size first, holes after the last chunk included: writes inside a file's end get
      // no speculative preallocation past it (XFS), which a size set afterwards would have turned
      // into allocated blocks (a 1 GiB copy holding 512 MiB allocated 1023 MiB).
      file.setLength(sizeBytes);
      long from = 0;
      for (int resume = 1; ; resume++) {
        ChunkCheck check = new ChunkCheck(described(), sizeBytes, from);
        long start = from;
        Optional<Status> cut =
            stream(stub -> opening.open(stub, start), reply -> write(reply, check, out));
        if (cut.isEmpty()) {
          check.complete();
          break;
        }
        requireResume(resume, cut.get(), what);
        if (ofVolume()) {
          // The next ReadVolume is a copy of another instant: nothing of this one may stay.
          file.setLength(0);
          file.setLength(sizeBytes);
        } else {
          from = check.verifiedUpTo();
        }
        LOG.atWarn()
            .addKeyValue("source", shown())
            .addKeyValue("node", node())
            .addKeyValue("from", from)
            .addKeyValue("resume", resume)
            .log(
                "the stream of {} from node {} was cut ({}); reading again from byte {}",
                shown(),
                node(),
                cut.get().getCode(),
                from);
        source.resumes().pause(resume, what);
      }
      out.force(true);
    } catch (IOException e) {
      throw StorageException.internal(
          what + ": cannot write its file: " + e.getClass().getSimpleName(), e);
    }
  }

  /** Checks one message of the stream as {@code check} says, and writes a chunk at its offset. */
  private void write(ReadReply reply, ChunkCheck check, FileChannel out) throws IOException {
    switch (reply.getPartCase()) {
      case CHUNK -> {
        check.accept(reply.getChunk());
        write(out, reply.getChunk().getOffset(), reply.getChunk().getData().asReadOnlyByteBuffer());
      }
      case END -> check.end(reply.getEnd());
      default -> throw unknownKind();
    }
  }

  private static void write(FileChannel out, long offset, ByteBuffer data) throws IOException {
    long at = offset;
    while (data.hasRemaining()) {
      at += out.write(data, at);
    }
  }
}
