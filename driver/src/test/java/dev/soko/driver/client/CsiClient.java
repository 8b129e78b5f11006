package dev.soko.driver.client;

import csi.v1.ControllerGrpc;
import csi.v1.Csi;
import csi.v1.GroupControllerGrpc;
import csi.v1.IdentityGrpc;
import csi.v1.NodeGrpc;
import csi.v1.SnapshotMetadataGrpc;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.ChannelOption;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A CSI client over a Unix domain socket, as kubelet and the sidecars talk to a driver. Used by the
 * demo, the benchmark and end-to-end tests against any CSI driver (Soko or a peer).
 */
public final class CsiClient implements AutoCloseable {
  private final EpollEventLoopGroup group;
  private final ManagedChannel channel;
  private final IdentityGrpc.IdentityBlockingStub identity;
  private final ControllerGrpc.ControllerBlockingStub controller;
  private final NodeGrpc.NodeBlockingStub node;
  private final GroupControllerGrpc.GroupControllerBlockingStub groupController;
  private final SnapshotMetadataGrpc.SnapshotMetadataBlockingStub snapshotMetadata;

  public CsiClient(Path socket) {
    group = new EpollEventLoopGroup(1);
    channel =
        NettyChannelBuilder.forAddress(new DomainSocketAddress(socket.toString()))
            .eventLoopGroup(group)
            .channelType(EpollDomainSocketChannel.class)
            // No TCP keepalive on a Unix socket: without this Netty warns on every connection.
            .withOption(ChannelOption.SO_KEEPALIVE, null)
            .usePlaintext()
            .build();
    identity = IdentityGrpc.newBlockingStub(channel);
    controller = ControllerGrpc.newBlockingStub(channel);
    node = NodeGrpc.newBlockingStub(channel);
    groupController = GroupControllerGrpc.newBlockingStub(channel);
    snapshotMetadata = SnapshotMetadataGrpc.newBlockingStub(channel);
  }

  /** Parses {@code unix:///path} (or a bare path). */
  public static Path socketPath(String endpoint) {
    return Path.of(
        endpoint.startsWith("unix://") ? endpoint.substring("unix://".length()) : endpoint);
  }

  public IdentityGrpc.IdentityBlockingStub identity() {
    return identity.withDeadlineAfter(30, TimeUnit.SECONDS);
  }

  public ControllerGrpc.ControllerBlockingStub controller() {
    return controller.withDeadlineAfter(120, TimeUnit.SECONDS);
  }

  public GroupControllerGrpc.GroupControllerBlockingStub groupController() {
    return groupController.withDeadlineAfter(120, TimeUnit.SECONDS);
  }

  public SnapshotMetadataGrpc.SnapshotMetadataBlockingStub snapshotMetadata() {
    return snapshotMetadata.withDeadlineAfter(600, TimeUnit.SECONDS);
  }

  public NodeGrpc.NodeBlockingStub node() {
    return node.withDeadlineAfter(120, TimeUnit.SECONDS);
  }

  /**
   * Polls Probe until the driver says ready, returning false when {@code timeout} passes first. A
   * driver that does not listen yet, or answers not-ready, is polled again after a short pause.
   */
  public boolean awaitReady(Path socket, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (Files.exists(socket)) {
        try {
          Csi.ProbeResponse probe =
              identity
                  .withDeadlineAfter(1, TimeUnit.SECONDS)
                  .probe(Csi.ProbeRequest.getDefaultInstance());
          if (!probe.hasReady() || probe.getReady().getValue()) {
            return true;
          }
        } catch (StatusRuntimeException notYet) {
          // Not listening yet, or still starting: poll again. After a failed connect the channel
          // waits out a reconnect backoff (1 s at first) and fails calls at once meanwhile; a
          // reset makes the next poll connect, so that readiness is seen within a poll.
          channel.resetConnectBackoff();
        }
      }
      Thread.sleep(2);
    }
    return false;
  }

  @Override
  public void close() {
    channel.shutdownNow();
    try {
      channel.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
  }
}
