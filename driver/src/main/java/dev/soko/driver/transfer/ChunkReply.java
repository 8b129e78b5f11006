package dev.soko.driver.transfer;

import dev.soko.data.v1.DataProto.Chunk;
import dev.soko.data.v1.DataProto.End;
import dev.soko.data.v1.DataProto.ReadReply;
import dev.soko.driver.server.StatusMapper;
import dev.soko.driver.volume.Failures;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends a {@link ChunkReader} as a server stream, a chunk at a time and only while the client's
 * window is open (gRPC's flow control): a slow reader slows the reads and holds about one chunk of
 * the driver's memory. The first chunks go from the call's thread, the rest from its ready
 * callbacks, which run one at a time in order. The stream ends with an End that counts the chunks
 * sent; a failure ends it with its code instead, so a cut stream never looks complete. A cancelled
 * stream releases the image.
 */
final class ChunkReply implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(ChunkReply.class);

  private final ServerCallStreamObserver<ReadReply> observer;
  private final ChunkReader reader;
  private final long sizeBytes;
  private long chunks;
  private volatile boolean finished;

  private ChunkReply(
      ServerCallStreamObserver<ReadReply> observer, ChunkReader reader, long sizeBytes) {
    this.observer = observer;
    this.reader = reader;
    this.sizeBytes = sizeBytes;
  }

  static void send(StreamObserver<ReadReply> observer, ChunkReader reader, long sizeBytes) {
    ChunkReply reply =
        new ChunkReply((ServerCallStreamObserver<ReadReply>) observer, reader, sizeBytes);
    reply.observer.setOnCancelHandler(reply::finish);
    reply.observer.setOnReadyHandler(reply);
    reply.run();
  }

  /** Sends chunks while the client can take them; the next ready callback goes on. */
  @Override
  public void run() {
    try {
      while (!finished && observer.isReady()) {
        Optional<Chunk> chunk = reader.next();
        if (chunk.isPresent()) {
          observer.onNext(ReadReply.newBuilder().setChunk(chunk.get()).build());
          chunks++;
        } else {
          finish();
          observer.onNext(
              ReadReply.newBuilder()
                  .setEnd(End.newBuilder().setSizeBytes(sizeBytes).setChunks(chunks))
                  .build());
          observer.onCompleted();
        }
      }
    } catch (RuntimeException e) {
      boolean open = !finished;
      finish();
      if (Failures.asStorage(e) == null) {
        LOG.error("snapshot read stream failed", e);
      }
      if (open) {
        observer.onError(StatusMapper.toStatus(e).asRuntimeException());
      }
    }
  }

  private void finish() {
    if (!finished) {
      finished = true;
      reader.close();
    }
  }
}
