package dev.soko.driver.transfer;

import dev.soko.data.v1.DataProto.ReadReply;
import dev.soko.data.v1.DataProto.ReadRequest;
import dev.soko.data.v1.DataProto.VolumeRef;
import dev.soko.data.v1.SnapshotDataGrpc;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.volume.RemoteSnapshot;
import dev.soko.driver.volume.StorageException;
import io.grpc.Channel;
import io.grpc.Context;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Iterator;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
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
final class StreamedSnapshot implements RemoteSnapshot {
  private static final Logger LOG = LoggerFactory.getLogger(StreamedSnapshot.class);

  /** Opens the stream of an image's chunks on a node's data port, from an offset. */
  @FunctionalInterface
  interface Opening {
    Iterator<ReadReply> open(SnapshotDataGrpc.SnapshotDataBlockingStub stub, long from);
  }

  private final Channel channel;
  private final String id;
  private final boolean ofVolume;
  private final Opening opening;
  private final String node;
  private final String endpoint;
  private final long sizeBytes;
  private final AccessType accessType;
  private final String fsType;
  private final Duration stall;
  private final Resumes resumes;
  private final ScheduledExecutorService timer;

  /** Another node's snapshot, read with Read from its start. */
  static StreamedSnapshot snapshot(
      Channel channel,
      String id,
      String node,
      String endpoint,
      long sizeBytes,
      AccessType accessType,
      String fsType,
      Duration stall,
      Resumes resumes,
      ScheduledExecutorService timer) {
    return new StreamedSnapshot(
        channel,
        id,
        false,
        (stub, from) ->
            stub.read(ReadRequest.newBuilder().setSnapshotId(id).setStartingOffset(from).build()),
        node,
        endpoint,
        sizeBytes,
        accessType,
        fsType,
        stall,
        resumes,
        timer);
  }

  /** Another node's volume, read with ReadVolume: a copy of it taken when the stream starts. */
  static StreamedSnapshot volume(
      Channel channel,
      String id,
      String node,
      String endpoint,
      long sizeBytes,
      AccessType accessType,
      String fsType,
      Duration stall,
      Resumes resumes,
      ScheduledExecutorService timer) {
    return new StreamedSnapshot(
        channel,
        id,
        true,
        (stub, from) -> stub.readVolume(VolumeRef.newBuilder().setVolumeId(id).build()),
        node,
        endpoint,
        sizeBytes,
        accessType,
        fsType,
        stall,
        resumes,
        timer);
  }

  private StreamedSnapshot(
      Channel channel,
      String id,
      boolean ofVolume,
      Opening opening,
      String node,
      String endpoint,
      long sizeBytes,
      AccessType accessType,
      String fsType,
      Duration stall,
      Resumes resumes,
      ScheduledExecutorService timer) {
    this.resumes = resumes;
    this.channel = channel;
    this.id = id;
    this.ofVolume = ofVolume;
    this.opening = opening;
    this.node = node;
    this.endpoint = endpoint;
    this.sizeBytes = sizeBytes;
    this.accessType = accessType;
    this.fsType = fsType;
    this.stall = stall;
    this.timer = timer;
  }

  @Override
  public String id() {
    return id;
  }

  @Override
  public boolean ofVolume() {
    return ofVolume;
  }

  @Override
  public String node() {
    return node;
  }

  @Override
  public long sizeBytes() {
    return sizeBytes;
  }

  @Override
  public AccessType accessType() {
    return accessType;
  }

  @Override
  public String fsType() {
    return fsType;
  }

  @Override
  public void copyTo(Path target) {
    String what = "copy of " + shown();
    String source = shown() + " of node " + node + " at " + endpoint;
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
        ChunkCheck check = new ChunkCheck(source, sizeBytes, from);
        Optional<Status> cut = stream(check, out, from);
        if (cut.isEmpty()) {
          check.complete();
          break;
        }
        if (resume > resumes.max() || Context.current().isCancelled()) {
          throw RemoteFailures.of(cut.get(), what, node, endpoint);
        }
        if (ofVolume) {
          // The next ReadVolume is a copy of another instant: nothing of this one may stay.
          file.setLength(0);
          file.setLength(sizeBytes);
        } else {
          from = check.verifiedUpTo();
        }
        LOG.atWarn()
            .addKeyValue("source", shown())
            .addKeyValue("node", node)
            .addKeyValue("from", from)
            .addKeyValue("resume", resume)
            .log(
                "the stream of {} from node {} was cut ({}); reading again from byte {}",
                shown(),
                node,
                cut.get().getCode(),
                from);
        resumes.pause(resume, what);
      }
      out.force(true);
    } catch (IOException e) {
      throw StorageException.internal(
          what + ": cannot write its file: " + e.getClass().getSimpleName(), e);
    }
  }

  /**
   * Reads one stream from {@code from} into {@code out}, cancelled when it stalls for {@link
   * #stall}: empty when it closed (complete or not, as {@code check} tells), the status of a stream
   * cut on the way ({@link Resumes#isCut}). Any other failure is thrown.
   */
  private Optional<Status> stream(ChunkCheck check, FileChannel out, long from) throws IOException {
    Context.CancellableContext call = Context.current().withCancellation();
    ProgressWatch watch = new ProgressWatch(call, stall, System::nanoTime).start(timer);
    Context previous = call.attach();
    try {
      Iterator<ReadReply> replies = opening.open(SnapshotDataGrpc.newBlockingStub(channel), from);
      while (replies.hasNext()) {
        ReadReply reply = replies.next();
        watch.progress();
        switch (reply.getPartCase()) {
          case CHUNK -> {
            check.accept(reply.getChunk());
            write(
                out,
                reply.getChunk().getOffset(),
                reply.getChunk().getData().asReadOnlyByteBuffer());
          }
          case END -> check.end(reply.getEnd());
          default ->
              throw new StorageException(
                  StorageException.Reason.INTERNAL,
                  "copy of "
                      + shown()
                      + " from node "
                      + node
                      + " at "
                      + endpoint
                      + " failed: a message of no known kind arrived");
        }
      }
      return Optional.empty();
    } catch (StatusRuntimeException e) {
      Status status =
          watch.stalled()
              ? Status.UNAVAILABLE.withDescription(
                  "nothing arrived for " + stall.toMillis() + " ms")
              : e.getStatus();
      if (Resumes.isCut(status)) {
        return Optional.of(status);
      }
      throw RemoteFailures.of(status, "copy of " + shown(), node, endpoint);
    } finally {
      call.detach(previous);
      // Ends the call however the loop left it (a bad chunk leaves it open otherwise).
      call.cancel(null);
      watch.close();
    }
  }

  private static void write(FileChannel out, long offset, ByteBuffer data) throws IOException {
    long at = offset;
    while (data.hasRemaining()) {
      at += out.write(data, at);
    }
  }
}
