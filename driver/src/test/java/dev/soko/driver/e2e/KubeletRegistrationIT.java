package dev.soko.driver.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import csi.v1.Csi;
import dev.soko.driver.client.CsiClient;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.ChannelOption;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.k8s.kubelet.pluginregistration.v1.PluginRegistration.InfoRequest;
import io.k8s.kubelet.pluginregistration.v1.PluginRegistration.PluginInfo;
import io.k8s.kubelet.pluginregistration.v1.PluginRegistration.RegistrationStatus;
import io.k8s.kubelet.pluginregistration.v1.RegistrationGrpc;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.StandardProtocolFamily;
import java.net.URI;
import java.net.UnixDomainSocketAddress;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The jar with built-in kubelet registration and liveness endpoint, driven the way the kubelet
 * drives a node plugin: its plugin watcher finds the socket in the registry directory, asks
 * GetInfo, dials the CSI endpoint it names, reports the outcome, and probes {@code /healthz}.
 */
class KubeletRegistrationIT {
  private Path root;
  private DriverJar driver;
  private Path registrationSocket;
  private final EpollEventLoopGroup kubeletLoop = new EpollEventLoopGroup(1);

  @BeforeEach
  void setUp() throws Exception {
    root = Files.createTempDirectory("soko-reg-");
    driver = new DriverJar(root);
    registrationSocket = root.resolve("plugins_registry/csi.soko.dev-reg.sock");
  }

  @AfterEach
  void tearDown() throws Exception {
    driver.close();
    kubeletLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    HostState.release(root);
  }

  @Test
  void registersOnlyOnceCsiServesAnswersHealthzAndDeregistersBeforeCsiStopsOnSigterm()
      throws Exception {
    int port;
    try (ServerSocket free = new ServerSocket(0)) {
      port = free.getLocalPort();
    }
    Process process =
        driver.launch(
            List.of(
                // On this host the kubelet's path of the CSI socket is the real one.
                "--kubelet-registration-path=" + driver.socket,
                "--registration-dir=" + registrationSocket.getParent(),
                "--health-address=127.0.0.1:" + port));

    awaitRegistrationSocket(process);
    assertThat(accepts(driver.socket))
        .as("the CSI socket serves when the registration socket appears; log:\n%s", driver.log())
        .isTrue();

    HttpClient http = HttpClient.newHttpClient();
    URI base = URI.create("http://127.0.0.1:" + port);
    assertThat(get(http, base, "/readyz"))
        .as("not ready for the node before the kubelet registered the driver")
        .isEqualTo("500 the kubelet has not registered the driver yet\n");
    ManagedChannel channel = connect(registrationSocket);
    try {
      RegistrationGrpc.RegistrationBlockingStub kubelet =
          RegistrationGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
      PluginInfo info = kubelet.getInfo(InfoRequest.getDefaultInstance());
      assertThat(info.getType()).isEqualTo("CSIPlugin");
      assertThat(info.getName()).isEqualTo("csi.soko.dev");
      assertThat(info.getEndpoint()).isEqualTo(driver.socket.toString());
      assertThat(info.getSupportedVersionsList()).containsExactly("1.0.0");

      // The kubelet's CSI plugin handler calls NodeGetInfo on the endpoint before it reports.
      try (CsiClient csi = new CsiClient(Path.of(info.getEndpoint()))) {
        assertThat(csi.node().nodeGetInfo(Csi.NodeGetInfoRequest.getDefaultInstance()).getNodeId())
            .isEqualTo("it-node");
      }
      kubelet.notifyRegistrationStatus(
          RegistrationStatus.newBuilder().setPluginRegistered(true).build());
      assertThat(get(http, base, "/readyz")).isEqualTo("200 ok");
      kubelet.notifyRegistrationStatus(
          RegistrationStatus.newBuilder()
              .setPluginRegistered(false)
              .setError("error updating CSINode: forbidden")
              .build());
    } finally {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    assertThat(get(http, base, "/readyz"))
        .isEqualTo("500 the kubelet refused the registration: error updating CSINode: forbidden\n");
    HttpResponse<String> healthz =
        http.send(
            HttpRequest.newBuilder(base.resolve("/healthz")).build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(healthz.statusCode()).isEqualTo(200);
    assertThat(healthz.body()).isEqualTo("ok");
    for (String other : List.of("/", "/metrics", "/healthz/x")) {
      assertThat(
              http.send(
                      HttpRequest.newBuilder(base.resolve(other)).build(),
                      HttpResponse.BodyHandlers.discarding())
                  .statusCode())
          .as(other)
          .isEqualTo(404);
    }

    process.destroy(); // SIGTERM
    boolean csiGoneFirst = false;
    while (process.isAlive()) {
      // CSI first: the registration socket only ever disappears, so one still there after the
      // CSI socket was seen gone was there when the CSI socket went.
      boolean csi = Files.exists(driver.socket);
      boolean registration = Files.exists(registrationSocket);
      csiGoneFirst |= !csi && registration;
      Thread.sleep(1);
    }
    assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
    String log = driver.log();
    assertThat(csiGoneFirst)
        .as("the CSI socket went while the registration socket was still there; log:\n%s", log)
        .isFalse();
    assertThat(registrationSocket).doesNotExist();
    assertThat(driver.socket).doesNotExist();

    List<String> lines = log.lines().toList();
    int serving = indexOf(lines, "msg=\"serving CSI\"");
    int registrationServed = indexOf(lines, "msg=\"serving kubelet registration\"");
    int removed = indexOf(lines, "msg=\"removed the kubelet registration socket\"");
    int csiStopped = indexOf(lines, "msg=\"stopped serving CSI\"");
    assertThat(serving).as(log).isNotNegative().isLessThan(registrationServed);
    assertThat(removed).as(log).isNotNegative().isLessThan(csiStopped);
    assertThat(lines)
        .anyMatch(
            l -> l.contains("level=info") && l.contains("msg=\"registered with the kubelet\""))
        .anyMatch(
            l ->
                l.contains("level=error")
                    && l.contains("msg=\"the kubelet refused the registration\"")
                    && l.contains("error=\"error updating CSINode: forbidden\""))
        .anyMatch(l -> l.contains("msg=stopped"))
        .noneMatch(l -> l.contains("Exception"));
  }

  /** The kubelet's plugin watcher, in short: the first moment the socket is in the directory. */
  private void awaitRegistrationSocket(Process process) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!Files.exists(registrationSocket)) {
      assertThat(process.isAlive()).as("driver exited; log:\n%s", driver.log()).isTrue();
      assertThat(System.nanoTime()).as("no registration socket in 60 s").isLessThan(deadline);
      Thread.sleep(1);
    }
  }

  private static boolean accepts(Path socket) throws IOException {
    try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX)) {
      channel.connect(UnixDomainSocketAddress.of(socket));
      return true;
    } catch (IOException refusedOrMissing) {
      return false;
    }
  }

  private ManagedChannel connect(Path socket) {
    return NettyChannelBuilder.forAddress(new DomainSocketAddress(socket.toString()))
        .channelType(EpollDomainSocketChannel.class)
        .eventLoopGroup(kubeletLoop)
        .withOption(ChannelOption.SO_KEEPALIVE, null)
        .usePlaintext()
        .build();
  }

  private static int indexOf(List<String> lines, String text) {
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).contains(text)) {
        return i;
      }
    }
    return -1;
  }

  /** The status code and body of a GET, as "200 ok". */
  private static String get(HttpClient http, URI base, String path) throws Exception {
    HttpResponse<String> response =
        http.send(
            HttpRequest.newBuilder(base.resolve(path)).build(),
            HttpResponse.BodyHandlers.ofString());
    return response.statusCode() + " " + response.body();
  }
}
