package dev.soko.driver.transfer;

import dev.soko.data.v1.DataProto.Chunk;
import dev.soko.data.v1.DataProto.End;
import dev.soko.data.v1.DataProto.ReadReply;
import dev.soko.driver.server.PacedReply;
import io.grpc.stub.StreamObserver;
import java.util.Optional;

/**
 * A {@link ChunkReader} as a server stream's messages, sent at the client's pace ({@link
 * PacedReply}): a slow reader slows the reads and holds about one chunk of the driver's memory. The
 * stream ends with an End that counts the chunks sent; a failure ends it with its code instead, so
 * a cut stream never looks complete. A cancelled stream releases the image.
 */
final class ChunkReply implements PacedReply.Source<ReadReply> {
  private final ChunkReader reader;
  private final long sizeBytes;
  private long chunks;
  private boolean ended;

  private ChunkReply(ChunkReader reader, long sizeBytes) {
    this.reader = reader;
    this.sizeBytes = sizeBytes;
  }

  static void send(StreamObserver<ReadReply> observer, ChunkReader reader, long sizeBytes) {
    PacedReply.send(observer, new ChunkReply(reader, sizeBytes), "image read stream");
  }

  @Override
  public Optional<ReadReply> next() {
    if (ended) {
      return Optional.empty();
    }
    Optional<Chunk> chunk = reader.next();
    if (chunk.isPresent()) {
      chunks++;
      return Optional.of(ReadReply.newBuilder().setChunk(chunk.get()).build());
    }
    ended = true;
    return Optional.of(
        ReadReply.newBuilder()
            .setEnd(End.newBuilder().setSizeBytes(sizeBytes).setChunks(chunks))
            .build());
  }

  @Override
  public void close() {
    reader.close();
  }
}
