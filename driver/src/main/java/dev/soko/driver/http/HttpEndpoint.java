package dev.soko.driver.http;

import io.grpc.netty.shaded.io.netty.bootstrap.ServerBootstrap;
import io.grpc.netty.shaded.io.netty.channel.Channel;
import io.grpc.netty.shaded.io.netty.channel.ChannelFuture;
import io.grpc.netty.shaded.io.netty.channel.ChannelInitializer;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.socket.SocketChannel;
import io.grpc.netty.shaded.io.netty.handler.codec.http.HttpObjectAggregator;
import io.grpc.netty.shaded.io.netty.handler.codec.http.HttpServerCodec;
import io.grpc.netty.shaded.io.netty.handler.timeout.ReadTimeoutHandler;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.Semaphore;

/**
 * A small plain-text HTTP/1.1 endpoint on Netty, which the jar carries for gRPC anyway. It runs on
 * the event loop and call executor it is given (the CSI server's), so it costs no threads: the
 * JDK's HttpServer brought ~260 classes and three threads, ~3 MiB of the driver's idle RSS. It
 * answers GET and HEAD on a fixed set of exact paths (404 elsewhere, 405 for other methods), one
 * request per connection. Each path computes at most {@link #MAX_CONCURRENT} answers at once and
 * answers 503 beyond that, so a slow route takes no more than that from the CSI calls and a burst
 * of scrapes never starves the liveness check.
 */
public final class HttpEndpoint implements AutoCloseable {
  static final int MAX_CONCURRENT = 2;
  static final int MAX_REQUEST_BYTES = 8192;
  static final int READ_TIMEOUT_SECONDS = 10;

  /** What one path answers; called on a call thread for every request. */
  @FunctionalInterface
  public interface Route {
    Reply answer();
  }

  /** A status code and a body of the given content type. */
  public record Reply(int code, String contentType, String body) {
    public static Reply text(int code, String body) {
      return new Reply(code, "text/plain; charset=utf-8", body);
    }
  }

  private final Channel listener;
  private final Set<Channel> connections;

  private HttpEndpoint(Channel listener, Set<Channel> connections) {
    this.listener = listener;
    this.connections = connections;
  }

  /**
   * @param address {@code host:port}; port 0 picks a free port
   * @param routes exact request paths, such as {@code /metrics}, and what they answer
   */
  public static HttpEndpoint start(
      EventLoopGroup eventLoop,
      Executor calls,
      InetSocketAddress address,
      Map<String, Route> routes)
      throws IOException {
    Map<String, Route> paths = new TreeMap<>(routes);
    Map<String, Semaphore> permits = new TreeMap<>();
    paths.keySet().forEach(path -> permits.put(path, new Semaphore(MAX_CONCURRENT)));
    Set<Channel> connections = ConcurrentHashMap.newKeySet();
    ServerBootstrap bootstrap =
        new ServerBootstrap()
            .group(eventLoop)
            .channel(EpollServerSocketChannel.class)
            .childHandler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel channel) {
                    connections.add(channel);
                    channel.closeFuture().addListener(f -> connections.remove(channel));
                    channel
                        .pipeline()
                        // A client that connects and sends nothing is dropped.
                        .addLast(new ReadTimeoutHandler(READ_TIMEOUT_SECONDS))
                        .addLast(new HttpServerCodec(4096, MAX_REQUEST_BYTES, MAX_REQUEST_BYTES))
                        .addLast(new HttpObjectAggregator(MAX_REQUEST_BYTES))
                        .addLast(new RouteHandler(paths, calls, permits));
                  }
                });
    ChannelFuture bound = bootstrap.bind(address).awaitUninterruptibly();
    if (!bound.isSuccess()) {
      Throwable cause = bound.cause();
      throw new IOException(cause.getMessage(), cause);
    }
    return new HttpEndpoint(bound.channel(), connections);
  }

  public InetSocketAddress address() {
    return (InetSocketAddress) listener.localAddress();
  }

  @Override
  public void close() {
    listener.close().awaitUninterruptibly();
    connections.forEach(Channel::close);
  }
}
