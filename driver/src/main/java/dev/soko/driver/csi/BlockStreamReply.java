package dev.soko.driver.csi;

import dev.soko.driver.extent.ByteRange;
import dev.soko.driver.server.PacedReply;
import dev.soko.driver.volume.BlockStream;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * A {@link BlockStream} as a server stream's messages, one batch per message, sent at the client's
 * pace ({@link PacedReply}). At least one message is sent, since it carries the volume's capacity.
 */
final class BlockStreamReply<R> implements PacedReply.Source<R> {
  private final BlockStream stream;
  private final int max;
  private final Function<List<ByteRange>, R> message;
  private boolean sent;
  private boolean done;

  private BlockStreamReply(BlockStream stream, int max, Function<List<ByteRange>, R> message) {
    this.stream = stream;
    this.max = max;
    this.message = message;
  }

  static <R> void send(
      StreamObserver<R> observer,
      BlockStream stream,
      int max,
      Function<List<ByteRange>, R> message) {
    PacedReply.send(
        observer, new BlockStreamReply<>(stream, max, message), "block metadata stream");
  }

  @Override
  public Optional<R> next() {
    if (done) {
      return Optional.empty();
    }
    List<ByteRange> batch = stream.next(max);
    done = batch.isEmpty();
    if (done && sent) {
      return Optional.empty();
    }
    sent = true;
    return Optional.of(message.apply(batch));
  }

  @Override
  public void close() {
    stream.close();
  }
}
