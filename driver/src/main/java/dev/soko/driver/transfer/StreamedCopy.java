package dev.soko.driver.transfer;

import dev.soko.data.v1.SnapshotDataGrpc;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.volume.RemoteSnapshot;
import dev.soko.driver.volume.StorageException;
import io.grpc.Context;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.util.Iterator;
import java.util.Optional;
import java.util.function.Function;

/**
 * A {@link RemoteSnapshot} copied by streaming it from its node's data port: the facts that node
 * gave, and the reading of one stream that image and tree copies share (its stall watch, its cut
 * told apart from a failure, its call ended however it ends). What a stream's messages are written
 * to, and how a cut stream resumes, is each copy's own.
 */
abstract class StreamedCopy implements RemoteSnapshot {
  /** Takes one message of a stream; what it throws ends the stream. */
  @FunctionalInterface
  interface Receiver<T> {
    void accept(T reply) throws IOException;
  }

  final StreamSource source;

  StreamedCopy(StreamSource source) {
    this.source = source;
  }

  @Override
  public String id() {
    return source.id();
  }

  @Override
  public boolean ofVolume() {
    return source.ofVolume();
  }

  @Override
  public String node() {
    return source.node();
  }

  @Override
  public long sizeBytes() {
    return source.sizeBytes();
  }

  @Override
  public AccessType accessType() {
    return source.accessType();
  }

  @Override
  public String fsType() {
    return source.fsType();
  }

  /** {@code shown()} with the node and endpoint it streams from, for the copy's messages. */
  final String described() {
    return shown() + " of node " + source.node() + " at " + source.endpoint();
  }

  /**
   * Throws the failure of a copy whose stream was {@code cut} once it resumed as often as it may
   * ({@code resume} counts from 1) or its caller gave up.
   */
  final void requireResume(int resume, Status cut, String what) {
    if (resume > source.resumes().max() || Context.current().isCancelled()) {
      throw RemoteFailures.of(cut, what, source.node(), source.endpoint());
    }
  }

  /**
   * Reads one stream that {@code opening} starts into {@code receiver}, cancelled when it stalls
   * for the source's stall: empty when it closed (complete or not, as the receiver tells), the
   * status of a stream cut on the way ({@link Resumes#isCut}). Any other failure is thrown.
   */
  final <T> Optional<Status> stream(
      Function<SnapshotDataGrpc.SnapshotDataBlockingStub, Iterator<T>> opening,
      Receiver<T> receiver)
      throws IOException {
    Context.CancellableContext call = Context.current().withCancellation();
    ProgressWatch watch =
        new ProgressWatch(call, source.stall(), System::nanoTime).start(source.timer());
    Context previous = call.attach();
    try {
      Iterator<T> replies = opening.apply(SnapshotDataGrpc.newBlockingStub(source.channel()));
      while (replies.hasNext()) {
        T reply = replies.next();
        watch.progress();
        receiver.accept(reply);
      }
      return Optional.empty();
    } catch (StatusRuntimeException e) {
      Status status =
          watch.stalled()
              ? Status.UNAVAILABLE.withDescription(
                  "nothing arrived for " + source.stall().toMillis() + " ms")
              : e.getStatus();
      if (Resumes.isCut(status)) {
        return Optional.of(status);
      }
      throw RemoteFailures.of(status, "copy of " + shown(), source.node(), source.endpoint());
    } finally {
      call.detach(previous);
      // Ends the call however the loop left it (a refused message leaves it open otherwise).
      call.cancel(null);
      watch.close();
    }
  }

  /** The failure of a stream that sent a message of a kind this copy does not know. */
  final StorageException unknownKind() {
    return new StorageException(
        StorageException.Reason.INTERNAL,
        "copy of "
            + shown()
            + " from node "
            + source.node()
            + " at "
            + source.endpoint()
            + " failed: a message of no known kind arrived");
  }
}
