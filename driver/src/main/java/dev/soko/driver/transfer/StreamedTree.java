package dev.soko.driver.transfer;

import dev.soko.data.v1.DataProto.SnapshotRef;
import dev.soko.data.v1.DataProto.TreeReply;
import dev.soko.data.v1.DataProto.VolumeRef;
import dev.soko.data.v1.SnapshotDataGrpc;
import dev.soko.driver.backend.CopyForm;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.sys.LinuxSyscalls;
import dev.soko.driver.sys.Syscalls;
import dev.soko.driver.volume.RemoteSnapshot;
import dev.soko.driver.volume.StorageException;
import io.grpc.Channel;
import io.grpc.Context;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.Iterator;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A snapshot (or volume) of form FILE_TREE as another node described it, copied by streaming its
 * ReadTree (or ReadVolumeTree) into an empty directory through a {@link TreeWriter}. A stream cut
 * on the way ({@link Resumes}) is followed by another from the start, into the emptied directory: a
 * tree's stream has no offset to go on from, and a volume's next stream is of another instant.
 */
final class StreamedTree implements RemoteSnapshot {
  private static final Logger LOG = LoggerFactory.getLogger(StreamedTree.class);

  private final Channel channel;
  private final String id;
  private final boolean ofVolume;
  private final Function<SnapshotDataGrpc.SnapshotDataBlockingStub, Iterator<TreeReply>> opening;
  private final String node;
  private final String endpoint;
  private final long sizeBytes;
  private final AccessType accessType;
  private final String fsType;
  private final Duration stall;
  private final Resumes resumes;
  private final ScheduledExecutorService timer;
  private final Syscalls syscalls = new LinuxSyscalls();

  private StreamedTree(
      Channel channel,
      String id,
      boolean ofVolume,
      String node,
      String endpoint,
      long sizeBytes,
      AccessType accessType,
      String fsType,
      Duration stall,
      Resumes resumes,
      ScheduledExecutorService timer) {
    this.channel = channel;
    this.id = id;
    this.ofVolume = ofVolume;
    this.opening =
        ofVolume
            ? stub -> stub.readVolumeTree(VolumeRef.newBuilder().setVolumeId(id).build())
            : stub -> stub.readTree(SnapshotRef.newBuilder().setSnapshotId(id).build());
    this.node = node;
    this.endpoint = endpoint;
    this.sizeBytes = sizeBytes;
    this.accessType = accessType;
    this.fsType = fsType;
    this.stall = stall;
    this.resumes = resumes;
    this.timer = timer;
  }

  /** Another node's snapshot, or (with {@code ofVolume}) its volume, of form FILE_TREE. */
  static StreamedTree of(
      boolean ofVolume,
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
    return new StreamedTree(
        channel,
        id,
        ofVolume,
        node,
        endpoint,
        sizeBytes,
        accessType,
        fsType,
        stall,
        resumes,
        timer);
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
  public CopyForm form() {
    return CopyForm.FILE_TREE;
  }

  @Override
  public void copyTo(Path target) {
    String what = "copy of " + shown();
    String source = shown() + " of node " + node + " at " + endpoint;
    for (int resume = 1; ; resume++) {
      Optional<Status> cut;
      try (TreeWriter writer = new TreeWriter(source, target, syscalls)) {
        cut = stream(writer);
        if (cut.isEmpty()) {
          writer.complete();
          return;
        }
      } catch (IOException e) {
        throw StorageException.internal(
            what + ": cannot write its files: " + e.getClass().getSimpleName(), e);
      }
      if (resume > resumes.max() || Context.current().isCancelled()) {
        throw RemoteFailures.of(cut.get(), what, node, endpoint);
      }
      empty(target, what);
      LOG.atWarn()
          .addKeyValue("source", shown())
          .addKeyValue("node", node)
          .addKeyValue("resume", resume)
          .log(
              "the stream of {} from node {} was cut ({}); reading it again from the start",
              shown(),
              node,
              cut.get().getCode());
      resumes.pause(resume, what);
    }
  }

  /**
   * Reads one stream into {@code writer}, cancelled when it stalls for {@link #stall}: empty when
   * it closed (complete or not, as the writer tells), the status of a stream cut on the way. Any
   * other failure is thrown.
   */
  private Optional<Status> stream(TreeWriter writer) {
    Context.CancellableContext call = Context.current().withCancellation();
    ProgressWatch watch = new ProgressWatch(call, stall, System::nanoTime).start(timer);
    Context previous = call.attach();
    try {
      Iterator<TreeReply> replies = opening.apply(SnapshotDataGrpc.newBlockingStub(channel));
      while (replies.hasNext()) {
        TreeReply reply = replies.next();
        watch.progress();
        try {
          switch (reply.getPartCase()) {
            case ENTRY -> writer.accept(reply.getEntry());
            case DATA -> writer.accept(reply.getData());
            case END -> writer.end(reply.getEnd());
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
        } catch (IOException e) {
          throw writer.failed(e);
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
      // Ends the call however the loop left it (a refused entry leaves it open otherwise).
      call.cancel(null);
      watch.close();
    }
  }

  /**
   * Removes everything in {@code directory}, never following a link, for a stream from the start.
   */
  private static void empty(Path directory, String what) {
    try {
      Files.walkFileTree(
          directory,
          new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
                throws IOException {
              Files.delete(file);
              return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path dir, IOException e) throws IOException {
              if (e != null) {
                throw e;
              }
              if (!dir.equals(directory)) {
                Files.delete(dir);
              }
              return FileVisitResult.CONTINUE;
            }
          });
    } catch (IOException e) {
      throw StorageException.internal(
          what + ": cannot empty its copy to read it again: " + e.getClass().getSimpleName(), e);
    }
  }
}
