package dev.soko.driver.server;

import dev.soko.driver.volume.Failures;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends a server stream one message at a time and only while the client's window is open (gRPC's
 * flow control): a slow reader slows the source and holds about one message of the driver's memory.
 * The first messages go from the call's thread, the rest from the call's ready callbacks, which run
 * one at a time in order. A failure ends the stream with its code, so a client never mistakes a
 * part for the whole; a cancelled or finished stream closes its source once.
 */
public final class PacedReply<R> implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(PacedReply.class);

  /** A stream's messages, made as the client can take them. */
  public interface Source<R> extends AutoCloseable {
    /** The next message, or empty when the stream is complete. */
    Optional<R> next();

    /** Releases what the source holds (files, descriptors); called once. */
    @Override
    void close();
  }

  private final ServerCallStreamObserver<R> observer;
  private final Source<R> source;
  private final String what;
  private volatile boolean finished;

  private PacedReply(ServerCallStreamObserver<R> observer, Source<R> source, String what) {
    this.observer = observer;
    this.source = source;
    this.what = what;
  }

  /**
   * Sends {@code source} as the reply of the call {@code observer} answers; {@code what} names the
   * stream in the log of an unexpected failure.
   */
  public static <R> void send(StreamObserver<R> observer, Source<R> source, String what) {
    PacedReply<R> reply = new PacedReply<>((ServerCallStreamObserver<R>) observer, source, what);
    reply.observer.setOnCancelHandler(reply::finish);
    reply.observer.setOnReadyHandler(reply);
    reply.run();
  }

  /** Sends messages while the client can take them; the next ready callback goes on. */
  @Override
  public void run() {
    try {
      while (!finished && observer.isReady()) {
        Optional<R> message = source.next();
        if (message.isPresent()) {
          observer.onNext(message.get());
        } else {
          finish();
          observer.onCompleted();
        }
      }
    } catch (RuntimeException e) {
      boolean open = !finished;
      finish();
      if (Failures.asStorage(e) == null) {
        LOG.error("{} failed", what, e);
      }
      if (open) {
        observer.onError(StatusMapper.toStatus(e).asRuntimeException());
      }
    }
  }

  private void finish() {
    if (!finished) {
      finished = true;
      source.close();
    }
  }
}
