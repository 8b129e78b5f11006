package dev.soko.driver.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import csi.v1.Csi;
import csi.v1.IdentityGrpc;
import dev.soko.driver.config.Endpoint;
import dev.soko.driver.csi.IdentityService;
import dev.soko.driver.health.Readiness;
import dev.soko.driver.kubelet.RegistrationService;
import dev.soko.driver.metrics.RpcMetrics;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.ChannelOption;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.grpc.stub.StreamObserver;
import io.k8s.kubelet.pluginregistration.v1.PluginRegistration.InfoRequest;
import io.k8s.kubelet.pluginregistration.v1.PluginRegistration.PluginInfo;
import io.k8s.kubelet.pluginregistration.v1.RegistrationGrpc;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A second socket served beside the CSI one, as the kubelet registration socket is. */
class SideServerTest {
  @TempDir Path temp;
  private final EventLoopGroup clientLoop = new EpollEventLoopGroup(1);
  private final List<ManagedChannel> channels = new CopyOnWriteArrayList<>();
  private final List<String> recorded = new CopyOnWriteArrayList<>();
  private final RpcMetrics metrics = (method, code, nanos) -> recorded.add(method + "=" + code);
  private Path csiSocket;
  private Path registrationSocket;
  private DriverServer server;

  @BeforeEach
  void start() throws IOException {
    csiSocket = temp.resolve("csi/csi.sock");
    registrationSocket = temp.resolve("registration/csi.soko.dev-reg.sock");
    server =
        DriverServer.start(
            new Endpoint(csiSocket),
            List.of(new IdentityService("csi.soko.dev", "t", Readiness.ALWAYS)),
            metrics,
            () -> true,
            2);
  }

  @AfterEach
  void stop() throws Exception {
    channels.forEach(ManagedChannel::shutdownNow);
    server.shutdown(Duration.ofSeconds(5));
    clientLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
  }

  private ManagedChannel connect(Path socket) {
    ManagedChannel channel =
        NettyChannelBuilder.forAddress(new DomainSocketAddress(socket.toString()))
            .channelType(EpollDomainSocketChannel.class)
            .eventLoopGroup(clientLoop)
            .withOption(ChannelOption.SO_KEEPALIVE, null)
            .usePlaintext()
            .build();
    channels.add(channel);
    return channel;
  }

  @Test
  void theSideSocketServesItsServiceAndClosingItRemovesTheSocketWhileCsiStillServes()
      throws Exception {
    SideServer side =
        server.serveBeside(
            registrationSocket, new RegistrationService("csi.soko.dev", Path.of("/k/csi.sock")));
    assertThat(registrationSocket).exists();
    PluginInfo info =
        RegistrationGrpc.newBlockingStub(connect(registrationSocket))
            .withDeadlineAfter(10, TimeUnit.SECONDS)
            .getInfo(InfoRequest.getDefaultInstance());
    assertThat(info.getName()).isEqualTo("csi.soko.dev");
    assertThat(recorded).contains("GetInfo=OK");

    side.close();
    assertThat(registrationSocket).doesNotExist();
    Csi.GetPluginInfoResponse csi =
        IdentityGrpc.newBlockingStub(connect(csiSocket))
            .withDeadlineAfter(10, TimeUnit.SECONDS)
            .getPluginInfo(Csi.GetPluginInfoRequest.getDefaultInstance());
    assertThat(csi.getName())
        .as("CSI serves on after the side socket went")
        .isEqualTo("csi.soko.dev");
  }

  @Test
  void closingLeavesARegistrationSocketAnotherDriverBoundSince() throws Exception {
    // The kubelet deregisters a driver whose registration socket goes; the old pod's clean-up
    // must not take the new pod's socket with it.
    SideServer old =
        server.serveBeside(
            registrationSocket, new RegistrationService("csi.soko.dev", Path.of("/k/csi.sock")));
    java.nio.file.Files.delete(registrationSocket);
    SideServer successor =
        server.serveBeside(
            registrationSocket, new RegistrationService("csi.soko.dev", Path.of("/k/new.sock")));
    try {
      old.close();
      assertThat(registrationSocket).as("the successor's socket").exists();
      assertThat(
              RegistrationGrpc.newBlockingStub(connect(registrationSocket))
                  .withDeadlineAfter(10, TimeUnit.SECONDS)
                  .getInfo(InfoRequest.getDefaultInstance())
                  .getEndpoint())
          .isEqualTo("/k/new.sock");
    } finally {
      successor.close();
    }
    assertThat(registrationSocket).doesNotExist();
  }

  @Test
  void aFailureOnTheSideSocketPassesTheOneErrorBoundaryAndIsNeverUnknown() throws Exception {
    RegistrationGrpc.RegistrationImplBase broken =
        new RegistrationGrpc.RegistrationImplBase() {
          @Override
          public void getInfo(InfoRequest request, StreamObserver<PluginInfo> observer) {
            throw new IllegalStateException("detail that must not reach the kubelet");
          }
        };
    try (SideServer side = server.serveBeside(registrationSocket, broken)) {
      StatusRuntimeException failure =
          catchThrowableOfType(
              StatusRuntimeException.class,
              () ->
                  RegistrationGrpc.newBlockingStub(connect(side.socket()))
                      .withDeadlineAfter(10, TimeUnit.SECONDS)
                      .getInfo(InfoRequest.getDefaultInstance()));
      assertThat(failure.getStatus().getCode()).isEqualTo(Status.Code.INTERNAL);
      assertThat(failure.getStatus().getDescription())
          .isEqualTo(StatusMapper.GENERIC_INTERNAL)
          .doesNotContain("detail");
      assertThat(recorded).contains("GetInfo=INTERNAL");
    }
  }

  @Test
  void aStaleSideSocketIsReplacedButALiveOneIsRefused() throws Exception {
    java.nio.file.Files.createDirectories(registrationSocket.getParent());
    try (ServerSocketChannel stale = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      stale.bind(UnixDomainSocketAddress.of(registrationSocket));
    }
    assertThat(registrationSocket).exists();
    try (SideServer side =
        server.serveBeside(
            registrationSocket, new RegistrationService("csi.soko.dev", Path.of("/k/csi.sock")))) {
      assertThatThrownBy(
              () ->
                  server.serveBeside(
                      registrationSocket,
                      new RegistrationService("csi.soko.dev", Path.of("/k/csi.sock"))))
          .isInstanceOf(IOException.class)
          .hasMessageContaining("another process is listening");
      assertThat(side.socket()).exists();
    }
  }
}
