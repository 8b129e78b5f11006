package dev.soko.driver.csi;

import dev.soko.driver.extent.ByteRange;
import dev.soko.driver.server.StatusMapper;
import dev.soko.driver.volume.BlockStream;
import dev.soko.driver.volume.Failures;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends a {@link BlockStream} as a server stream, one batch per message and only while the client's
 * window is open (gRPC's flow control): a slow reader holds the stream, not the driver's memory.
 * The first messages go from the call's thread; the rest from the call's ready callbacks, which run
 * one at a time in order. At least one message is sent, since it carries the volume's capacity. A
 * failure after the first message ends the stream with its code, so a client never mistakes a part
 * for the whole; a cancelled stream releases its files.
 */
final class BlockStreamReply<R> implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(BlockStreamReply.class);

  private final ServerCallStreamObserver<R> observer;
  private final BlockStream stream;
  private final int max;
  private final Function<List<ByteRange>, R> message;
  private boolean sent;
  private volatile boolean finished;

  private BlockStreamReply(
      ServerCallStreamObserver<R> observer,
      BlockStream stream,
      int max,
      Function<List<ByteRange>, R> message) {
    this.observer = observer;
    this.stream = stream;
    this.max = max;
    this.message = message;
  }

  static <R> void send(
      StreamObserver<R> observer,
      BlockStream stream,
      int max,
      Function<List<ByteRange>, R> message) {
    BlockStreamReply<R> reply =
        new BlockStreamReply<>((ServerCallStreamObserver<R>) observer, stream, max, message);
    reply.observer.setOnCancelHandler(reply::finish);
    reply.observer.setOnReadyHandler(reply);
    reply.run();
  }

  /** Sends batches while the client can take them; the next ready callback goes on. */
  @Override
  public void run() {
    try {
      while (!finished && observer.isReady()) {
        List<ByteRange> batch = stream.next(max);
        if (!batch.isEmpty() || !sent) {
          observer.onNext(message.apply(batch));
          sent = true;
        }
        if (batch.isEmpty()) {
          finish();
          observer.onCompleted();
        }
      }
    } catch (RuntimeException e) {
      boolean open = !finished;
      finish();
      if (Failures.asStorage(e) == null) {
        LOG.error("block metadata stream failed", e);
      }
      if (open) {
        observer.onError(StatusMapper.toStatus(e).asRuntimeException());
      }
    }
  }

  private void finish() {
    if (!finished) {
      finished = true;
      stream.close();
    }
  }
}
