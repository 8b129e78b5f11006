package dev.soko.driver.nri;

import com.google.protobuf.ByteString;
import java.io.IOException;
import java.io.InputStream;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * One connection to the runtime's NRI socket: the two multiplexed ttrpc connections over it. On
 * {@link MuxFrame#PLUGIN_SERVICE} the runtime's requests are answered by {@code service}, one at a
 * time in arrival order (the runtime sends them one at a time anyway); on {@link
 * MuxFrame#RUNTIME_SERVICE} {@link #call} sends this side's requests. A reader thread takes every
 * frame; when the runtime closes the socket or sends what cannot be read, the connection closes and
 * {@link #closed()} completes.
 */
public final class NriConnection implements AutoCloseable {
  private final SocketChannel channel;
  private final Function<TtrpcRequest, TtrpcResponse> service;
  private final Object writeLock = new Object();
  private final TtrpcDecoder fromRuntimeClient = new TtrpcDecoder();
  private final TtrpcDecoder fromRuntimeServer = new TtrpcDecoder();
  private final Map<Integer, CompletableFuture<TtrpcResponse>> pending = new ConcurrentHashMap<>();
  private final AtomicInteger nextStream = new AtomicInteger(1);
  private final CompletableFuture<Throwable> closed = new CompletableFuture<>();
  private final ExecutorService handler;

  private NriConnection(SocketChannel channel, Function<TtrpcRequest, TtrpcResponse> service) {
    this.channel = channel;
    this.service = service;
    this.handler =
        Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, "nri-requests");
              t.setDaemon(true);
              return t;
            });
  }

  /** Connects to the runtime at {@code socket}; {@code service} answers the runtime's calls. */
  public static NriConnection open(Path socket, Function<TtrpcRequest, TtrpcResponse> service)
      throws IOException {
    SocketChannel channel = SocketChannel.open(UnixDomainSocketAddress.of(socket));
    NriConnection connection = new NriConnection(channel, service);
    Thread reader = new Thread(connection::readUntilClosed, "nri-reader");
    reader.setDaemon(true);
    reader.start();
    return connection;
  }

  /**
   * Calls {@code method} of the runtime's {@code service} and waits at most {@code timeout}.
   *
   * @throws IOException when the connection closes, the wait times out or the runtime answers with
   *     an error status
   */
  public ByteString call(String service, String method, ByteString payload, Duration timeout)
      throws IOException {
    int stream = nextStream.getAndAdd(2);
    CompletableFuture<TtrpcResponse> answer = new CompletableFuture<>();
    pending.put(stream, answer);
    try {
      byte[] request = new TtrpcRequest(service, method, payload, timeout.toNanos()).encode();
      send(
          MuxFrame.RUNTIME_SERVICE,
          new TtrpcMessage(stream, TtrpcMessage.REQUEST, (byte) 0, request));
      TtrpcResponse response = answer.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
      if (!response.isOk()) {
        throw new IOException(
            service
                + "/"
                + method
                + " answered "
                + response.status().getCode()
                + ": "
                + response.status().getMessage());
      }
      return response.payload();
    } catch (TimeoutException e) {
      throw new IOException(service + "/" + method + " got no answer within " + timeout);
    } catch (ExecutionException e) {
      throw new IOException(service + "/" + method + " failed: " + e.getCause(), e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while calling " + service + "/" + method, e);
    } finally {
      pending.remove(stream);
    }
  }

  /** Completes, with the reason, once the connection is closed, by either side. */
  public CompletableFuture<Throwable> closed() {
    return closed;
  }

  private void readUntilClosed() {
    Throwable reason = new IOException("the runtime closed the NRI connection");
    try {
      InputStream in = new ChannelInput(channel);
      for (MuxFrame frame = MuxFrame.read(in); frame != null; frame = MuxFrame.read(in)) {
        switch (frame.connection()) {
          case MuxFrame.PLUGIN_SERVICE -> serve(fromRuntimeClient.feed(frame.payload()));
          case MuxFrame.RUNTIME_SERVICE -> answer(fromRuntimeServer.feed(frame.payload()));
          default -> {
            // As the runtime's own multiplexer does: frames of a connection nobody opened go.
          }
        }
      }
    } catch (IOException | RuntimeException e) {
      reason = e;
    }
    close(reason);
  }

  private void serve(List<TtrpcMessage> messages) {
    for (TtrpcMessage message : messages) {
      if (message.type() != TtrpcMessage.REQUEST) {
        continue;
      }
      handler.execute(() -> answerRequest(message));
    }
  }

  private void answerRequest(TtrpcMessage message) {
    TtrpcResponse response;
    try {
      response = service.apply(TtrpcRequest.decode(message.data()));
    } catch (IOException e) {
      response = TtrpcResponse.error(io.grpc.Status.Code.INVALID_ARGUMENT, e.getMessage());
    }
    try {
      send(
          MuxFrame.PLUGIN_SERVICE,
          new TtrpcMessage(message.stream(), TtrpcMessage.RESPONSE, (byte) 0, response.encode()));
    } catch (IOException e) {
      close(e);
    }
  }

  private void answer(List<TtrpcMessage> messages) throws IOException {
    for (TtrpcMessage message : messages) {
      CompletableFuture<TtrpcResponse> waiting = pending.get(message.stream());
      if (message.type() == TtrpcMessage.RESPONSE && waiting != null) {
        waiting.complete(TtrpcResponse.decode(message.data()));
      }
    }
  }

  private void send(int connection, TtrpcMessage message) throws IOException {
    ByteBuffer bytes = ByteBuffer.wrap(MuxFrame.encode(connection, message.encode()));
    synchronized (writeLock) {
      while (bytes.hasRemaining()) {
        channel.write(bytes);
      }
    }
  }

  private void close(Throwable reason) {
    try {
      channel.close();
    } catch (IOException e) {
      // closing anyway
    }
    handler.shutdown();
    pending.values().forEach(p -> p.completeExceptionally(reason));
    closed.complete(reason);
  }

  @Override
  public void close() {
    close(new IOException("the NRI connection was closed by this plugin"));
  }

  /**
   * The channel's bytes as a stream, read straight from the channel: {@code
   * Channels.newInputStream} would hold the channel's blocking lock while it waits to read, and so
   * block every write.
   */
  private static final class ChannelInput extends InputStream {
    private final SocketChannel channel;

    ChannelInput(SocketChannel channel) {
      this.channel = channel;
    }

    @Override
    public int read() throws IOException {
      byte[] one = new byte[1];
      return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      return len == 0 ? 0 : channel.read(ByteBuffer.wrap(b, off, len));
    }
  }
}
