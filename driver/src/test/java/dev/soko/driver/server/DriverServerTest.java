package dev.soko.driver.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import csi.v1.Csi;
import csi.v1.IdentityGrpc;
import dev.soko.driver.client.CsiClient;
import dev.soko.driver.config.Endpoint;
import dev.soko.driver.csi.ClusterControllerService;
import dev.soko.driver.csi.IdentityService;
import dev.soko.driver.metrics.RpcMetrics;
import io.grpc.BindableService;
import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/** The real server on a real Unix socket, with a real Netty client. */
class DriverServerTest {
  @TempDir Path temp;
  private final EventLoopGroup clientLoop = new EpollEventLoopGroup(1);
  private final List<String> recorded = new CopyOnWriteArrayList<>();
  private final RpcMetrics metrics = (method, code, nanos) -> recorded.add(method + "=" + code);

  @AfterEach
  void stopClientLoop() {
    clientLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
  }

  private DriverServer start(Path socket, BooleanSupplier ready) throws IOException {
    List<BindableService> services =
        List.of(
            new IdentityService(
                "csi.soko.dev",
                "t",
                () -> ready.getAsBoolean() ? Optional.empty() : Optional.of("not yet")),
            new ClusterControllerService());
    return DriverServer.start(new Endpoint(socket), services, metrics, ready, 4);
  }

  private ManagedChannel connect(Path socket) {
    return NettyChannelBuilder.forAddress(new DomainSocketAddress(socket.toString()))
        .channelType(EpollDomainSocketChannel.class)
        .eventLoopGroup(clientLoop)
        .usePlaintext()
        .build();
  }

  @Test
  void servesCsiAndHealthOnTheSocketAndRemovesItAtShutdown() throws Exception {
    Path socket = temp.resolve("sub/csi.sock");
    DriverServer server = start(socket, () -> true);
    ManagedChannel channel = connect(socket);
    try {
      Csi.GetPluginInfoResponse info =
          IdentityGrpc.newBlockingStub(channel)
              .getPluginInfo(Csi.GetPluginInfoRequest.getDefaultInstance());
      assertThat(info.getName()).isEqualTo("csi.soko.dev");
      assertThat(recorded).contains("GetPluginInfo=OK");

      HealthCheckResponse.ServingStatus status = HealthCheckResponse.ServingStatus.UNKNOWN;
      for (int i = 0; i < 50 && status != HealthCheckResponse.ServingStatus.SERVING; i++) {
        status =
            HealthGrpc.newBlockingStub(channel)
                .check(HealthCheckRequest.getDefaultInstance())
                .getStatus();
        Thread.sleep(20);
      }
      assertThat(status).isEqualTo(HealthCheckResponse.ServingStatus.SERVING);
    } finally {
      channel.shutdownNow();
      server.shutdown(Duration.ofSeconds(5));
    }
    assertThat(socket).doesNotExist();
  }

  @Test
  void aConnectionOverTheUnixSocketLogsNoWarning() throws Exception {
    // gRPC asks Netty for TCP keepalive on each channel; on a Unix socket Netty used to warn
    // "Unknown channel option 'SO_KEEPALIVE'" on every connection, on both ends.
    Logger netty = (Logger) LoggerFactory.getLogger("io.grpc.netty.shaded.io.netty");
    ListAppender<ILoggingEvent> warnings = new ListAppender<>();
    warnings.start();
    netty.addAppender(warnings);
    Path socket = temp.resolve("csi.sock");
    DriverServer server = start(socket, () -> true);
    try (CsiClient client = new CsiClient(socket)) {
      assertThat(client.awaitReady(socket, Duration.ofSeconds(10))).isTrue();
      assertThat(recorded).contains("Probe=OK");
    } finally {
      // The connections' warnings only: the event loop's own shutdown may log about a listener
      // notified after it stopped, which says nothing about the connections.
      netty.detachAppender(warnings);
      server.shutdown(Duration.ofSeconds(5));
    }
    assertThat(warnings.list)
        .filteredOn(event -> event.getLevel().isGreaterOrEqual(Level.WARN))
        .extracting(ILoggingEvent::getFormattedMessage)
        .isEmpty();
  }

  @Test
  void shutdownLeavesTheSocketOfTheServerThatTookThePathOver() throws Exception {
    // A node plugin pod replaced while the old one drains its calls: the new driver binds the
    // path the old one stopped listening on, and the old one's shutdown must not remove it.
    Path socket = temp.resolve("csi.sock");
    DriverServer old = start(socket, () -> true);
    Files.delete(socket);
    DriverServer successor = start(socket, () -> true);
    try {
      old.shutdown(Duration.ofSeconds(5));
      assertThat(socket).as("the successor's socket").exists();
      ManagedChannel channel = connect(socket);
      try {
        assertThat(
                IdentityGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(10, TimeUnit.SECONDS)
                    .getPluginInfo(Csi.GetPluginInfoRequest.getDefaultInstance())
                    .getName())
            .isEqualTo("csi.soko.dev");
      } finally {
        channel.shutdownNow();
      }
    } finally {
      successor.shutdown(Duration.ofSeconds(5));
    }
    assertThat(socket).as("removed by the server that bound it").doesNotExist();
  }

  @Test
  void refusesASocketALiveProcessListensOn() throws Exception {
    Path socket = temp.resolve("csi.sock");
    DriverServer first = start(socket, () -> true);
    try {
      assertThatThrownBy(() -> start(socket, () -> true))
          .isInstanceOf(IOException.class)
          .hasMessageContaining("another process is listening");
    } finally {
      first.shutdown(Duration.ofSeconds(5));
    }
  }

  @Test
  void replacesAStaleSocketButNeverAnotherFile() throws Exception {
    Path socket = temp.resolve("csi.sock");
    try (ServerSocketChannel stale = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      stale.bind(UnixDomainSocketAddress.of(socket));
    }
    assertThat(socket).exists();
    start(socket, () -> true).shutdown(Duration.ofSeconds(5));

    Path file = temp.resolve("not-a-socket");
    Files.writeString(file, "data");
    assertThatThrownBy(() -> start(file, () -> true))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("not a socket");
    assertThat(file).hasContent("data");
  }

  @Test
  void gracefulShutdownLetsTheInFlightCallFinish() throws Exception {
    Path socket = temp.resolve("csi.sock");
    CountDownLatch inCall = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    BooleanSupplier slowReady =
        () -> {
          if (Thread.currentThread().getName().startsWith("csi-rpc")) {
            inCall.countDown();
            try {
              release.await(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
          return true;
        };
    DriverServer server = start(socket, slowReady);
    ManagedChannel channel = connect(socket);
    try {
      var future = IdentityGrpc.newFutureStub(channel).probe(Csi.ProbeRequest.getDefaultInstance());
      assertThat(inCall.await(5, TimeUnit.SECONDS)).isTrue();
      Thread shutdown =
          new Thread(
              () -> {
                try {
                  server.shutdown(Duration.ofSeconds(10));
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              });
      shutdown.start();
      Thread.sleep(200);
      assertThat(shutdown.isAlive()).as("shutdown waits for the call").isTrue();
      release.countDown();
      assertThat(future.get(5, TimeUnit.SECONDS).getReady().getValue()).isTrue();
      shutdown.join(10_000);
      assertThat(shutdown.isAlive()).isFalse();
    } finally {
      channel.shutdownNow();
    }
  }
}
