package dev.soko.driver.testing;

import csi.v1.ControllerGrpc;
import csi.v1.GroupControllerGrpc;
import csi.v1.IdentityGrpc;
import csi.v1.NodeGrpc;
import dev.soko.driver.metrics.RpcMetrics;
import dev.soko.driver.server.RpcInterceptor;
import io.grpc.BindableService;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** The services behind the real interceptor on an in-process transport, with blocking stubs. */
public final class CsiHarness implements AutoCloseable {
  private final Server server;
  private final ManagedChannel channel;

  public CsiHarness(RpcMetrics metrics, List<BindableService> services) throws IOException {
    String name = InProcessServerBuilder.generateName();
    InProcessServerBuilder builder = InProcessServerBuilder.forName(name).directExecutor();
    RpcInterceptor interceptor = new RpcInterceptor(metrics);
    for (BindableService service : services) {
      builder.addService(ServerInterceptors.intercept(service, interceptor));
    }
    server = builder.build().start();
    channel = InProcessChannelBuilder.forName(name).directExecutor().build();
  }

  public CsiHarness(BindableService... services) throws IOException {
    this(RpcMetrics.NONE, List.of(services));
  }

  public IdentityGrpc.IdentityBlockingStub identity() {
    return IdentityGrpc.newBlockingStub(channel);
  }

  public ControllerGrpc.ControllerBlockingStub controller() {
    return ControllerGrpc.newBlockingStub(channel);
  }

  public GroupControllerGrpc.GroupControllerBlockingStub groupController() {
    return GroupControllerGrpc.newBlockingStub(channel);
  }

  public NodeGrpc.NodeBlockingStub node() {
    return NodeGrpc.newBlockingStub(channel);
  }

  /** For stubs of services other than CSI's, such as the kubelet's Registration. */
  public ManagedChannel channel() {
    return channel;
  }

  @Override
  public void close() throws InterruptedException {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }
}
