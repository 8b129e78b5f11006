package dev.soko.driver.server;

import dev.soko.driver.config.Endpoint;
import dev.soko.driver.http.HttpEndpoint;
import dev.soko.driver.metrics.RpcMetrics;
import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.ChannelOption;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.grpc.protobuf.services.HealthStatusManager;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gRPC server on a Unix domain socket (Netty epoll). One event-loop thread is plenty for the
 * handful of local clients (kubelet and sidecars); calls run on a bounded {@link CallExecutor}
 * whose threads are started only when all others are busy and retire when idle, which keeps idle
 * memory low.
 */
public final class DriverServer {
  private static final Logger LOG = LoggerFactory.getLogger(DriverServer.class);
  static final int MAX_QUEUED_CALLS = 1024;

  private final Path socket;
  private final Server server;
  private final HealthStatusManager health;
  private final EventLoopGroup eventLoop;
  private final ExecutorService executor;
  private final RpcInterceptor interceptor;
  private final CallHandOff handOff;

  private DriverServer(
      Path socket,
      Server server,
      HealthStatusManager health,
      EventLoopGroup eventLoop,
      ExecutorService executor,
      RpcInterceptor interceptor,
      CallHandOff handOff) {
    this.socket = socket;
    this.server = server;
    this.health = health;
    this.eventLoop = eventLoop;
    this.executor = executor;
    this.interceptor = interceptor;
    this.handOff = handOff;
  }

  /**
   * Binds the socket and starts serving.
   *
   * @param ready the readiness the health service reports (Probe's, in node mode)
   * @param threads the most calls that run at once; further calls queue
   */
  public static DriverServer start(
      Endpoint endpoint,
      List<BindableService> services,
      RpcMetrics metrics,
      BooleanSupplier ready,
      int threads)
      throws IOException {
    Path socket = endpoint.socket();
    SocketGuard.prepare(socket);
    HealthStatusManager health = new HealthStatusManager();
    health.setStatus(HealthStatusManager.SERVICE_NAME_ALL_SERVICES, ServingStatus.NOT_SERVING);
    EventLoopGroup eventLoop = new EpollEventLoopGroup(1, daemonThreads("csi-io"));
    ExecutorService executor =
        new CallExecutor(threads, MAX_QUEUED_CALLS, 30, TimeUnit.SECONDS, daemonThreads("csi-rpc"));
    RpcInterceptor interceptor = new RpcInterceptor(metrics);
    CallHandOff handOff = new CallHandOff(executor);
    Server server =
        SocketGuard.bindThenPublish(
            socket,
            at -> {
              NettyServerBuilder builder =
                  builder(at, eventLoop)
                      .addService(handOff.intercept(health.getHealthService().bindService()));
              for (BindableService service : services) {
                builder.addService(handOff.intercept(service.bindService(), interceptor));
              }
              return builder.build();
            });
    LOG.atInfo().addKeyValue("endpoint", "unix://" + socket).log("serving CSI");
    DriverServer driverServer =
        new DriverServer(socket, server, health, eventLoop, executor, interceptor, handOff);
    driverServer.reportHealthWhenReady(ready);
    return driverServer;
  }

  /**
   * A server whose callbacks run on the I/O thread: {@link CallHandOff} moves each call's code to
   * the call executor, once per call instead of gRPC's once per step.
   */
  private static NettyServerBuilder builder(Path at, EventLoopGroup eventLoop) {
    return NettyServerBuilder.forAddress(new DomainSocketAddress(at.toString()))
        .channelType(EpollServerDomainSocketChannel.class)
        // gRPC asks for TCP keepalive on every accepted channel; a Unix socket has no such
        // option and Netty warned once per connection. A null value removes gRPC's default.
        .withChildOption(ChannelOption.SO_KEEPALIVE, null)
        .bossEventLoopGroup(eventLoop)
        .workerEventLoopGroup(eventLoop)
        .directExecutor();
  }

  /**
   * Serves {@code service} on a second socket, on this server's I/O thread and call threads and
   * behind the same interceptor (error boundary, logs, metrics), so that it costs no threads of its
   * own. It is a server of its own so that it can bind after this one serves and go away before
   * this one stops: close it before {@link #shutdown}. A stale socket is replaced as at start.
   */
  public SideServer serveBeside(Path sideSocket, BindableService service) throws IOException {
    SocketGuard.prepare(sideSocket);
    Server side =
        SocketGuard.bindThenPublish(
            sideSocket,
            at ->
                builder(at, eventLoop)
                    .addService(handOff.intercept(service.bindService(), interceptor))
                    .build());
    return new SideServer(sideSocket, side);
  }

  /**
   * Serves HTTP {@code routes} at {@code address} on this server's I/O thread, with answers
   * computed on its call threads. Close it before {@link #shutdown}, which stops those threads.
   */
  public HttpEndpoint serveHttp(InetSocketAddress address, Map<String, HttpEndpoint.Route> routes)
      throws IOException {
    return HttpEndpoint.start(eventLoop, executor, address, routes);
  }

  private void reportHealthWhenReady(BooleanSupplier ready) {
    Thread watcher =
        new Thread(
            () -> {
              try {
                while (!ready.getAsBoolean()) {
                  Thread.sleep(100);
                }
                health.setStatus(
                    HealthStatusManager.SERVICE_NAME_ALL_SERVICES, ServingStatus.SERVING);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              } catch (RuntimeException e) {
                LOG.warn("readiness check failed; health stays NOT_SERVING", e);
              }
            },
            "csi-health");
    watcher.setDaemon(true);
    watcher.start();
  }

  /** Blocks until the server has terminated. */
  public void awaitTermination() throws InterruptedException {
    server.awaitTermination();
  }

  /**
   * Stops accepting calls, lets in-flight calls finish for up to {@code grace}, then cancels the
   * rest and removes the socket unless another server listens on it by then.
   */
  public void shutdown(Duration grace) throws InterruptedException {
    health.enterTerminalState();
    server.shutdown();
    if (!server.awaitTermination(grace.toMillis(), TimeUnit.MILLISECONDS)) {
      LOG.warn("calls still running after {}s; cancelling them", grace.toSeconds());
      server.shutdownNow();
      server.awaitTermination(5, TimeUnit.SECONDS);
    }
    executor.shutdown();
    // A quiet period: the closed connections' last listener notifications reach the I/O thread
    // after the server has terminated; with none, Netty rejects them and logs an error.
    eventLoop.shutdownGracefully(100, 1000, TimeUnit.MILLISECONDS);
    try {
      if (!SocketGuard.removeIfDead(socket)) {
        LOG.atInfo()
            .addKeyValue("endpoint", "unix://" + socket)
            .log("left the socket in place: another server listens on it");
      }
    } catch (IOException e) {
      LOG.warn("could not remove socket {}", socket, e);
    }
    LOG.atInfo().addKeyValue("endpoint", "unix://" + socket).log("stopped serving CSI");
  }

  private static ThreadFactory daemonThreads(String prefix) {
    AtomicInteger counter = new AtomicInteger();
    return runnable -> {
      Thread thread = new Thread(runnable, prefix + "-" + counter.incrementAndGet());
      thread.setDaemon(true);
      return thread;
    };
  }
}
