package dev.soko.driver.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import csi.v1.Csi;
import csi.v1.IdentityGrpc;
import dev.soko.driver.metrics.RpcMetrics;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The one hand-off per call, on a real gRPC server and client over a Unix socket. */
class CallHandOffTest {
  private final ExecutorService calls =
      Executors.newFixedThreadPool(2, r -> new Thread(r, "test-call-thread"));
  private final AtomicInteger handOffs = new AtomicInteger();
  private final List<String> methodThreads = new CopyOnWriteArrayList<>();
  private final List<String> recorded = new CopyOnWriteArrayList<>();
  private final RpcMetrics metrics = (method, code, nanos) -> recorded.add(method + "=" + code);
  private final EventLoopGroup loop = new EpollEventLoopGroup(1);
  @TempDir Path temp;
  private Server server;
  private ManagedChannel channel;

  @AfterEach
  void stop() throws InterruptedException {
    if (channel != null) {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    if (server != null) {
      server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    calls.shutdownNow();
    loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
  }

  /** Identity that notes the thread its method runs on, and fails when asked for a name "fail". */
  private final class Identity extends IdentityGrpc.IdentityImplBase {
    @Override
    public void getPluginInfo(
        Csi.GetPluginInfoRequest request, StreamObserver<Csi.GetPluginInfoResponse> observer) {
      methodThreads.add(Thread.currentThread().getName());
      observer.onNext(Csi.GetPluginInfoResponse.newBuilder().setName("csi.soko.dev").build());
      observer.onCompleted();
    }

    @Override
    public void probe(Csi.ProbeRequest request, StreamObserver<Csi.ProbeResponse> observer) {
      methodThreads.add(Thread.currentThread().getName());
      throw dev.soko.driver.volume.StorageException.invalid("probe refused for the test");
    }
  }

  /**
   * The server as {@link DriverServer} builds it, on a Unix socket and Netty's epoll transport,
   * where a call's headers, message and end arrive as frames of their own.
   */
  private IdentityGrpc.IdentityBlockingStub serve(java.util.concurrent.Executor executor)
      throws Exception {
    DomainSocketAddress socket = new DomainSocketAddress(temp.resolve("csi.sock").toString());
    CallHandOff handOff = new CallHandOff(executor);
    server =
        NettyServerBuilder.forAddress(socket)
            .channelType(EpollServerDomainSocketChannel.class)
            .bossEventLoopGroup(loop)
            .workerEventLoopGroup(loop)
            .directExecutor()
            .addService(
                handOff.intercept(new Identity().bindService(), new RpcInterceptor(metrics)))
            .build()
            .start();
    channel =
        NettyChannelBuilder.forAddress(socket)
            .channelType(EpollDomainSocketChannel.class)
            .eventLoopGroup(loop)
            .usePlaintext()
            .build();
    return IdentityGrpc.newBlockingStub(channel);
  }

  private java.util.concurrent.Executor counted() {
    return task -> {
      handOffs.incrementAndGet();
      calls.execute(task);
    };
  }

  @Test
  void eachCallsCodeRunsOnTheCallExecutor() throws Exception {
    IdentityGrpc.IdentityBlockingStub identity = serve(counted());

    for (int i = 0; i < 5; i++) {
      assertThat(identity.getPluginInfo(Csi.GetPluginInfoRequest.getDefaultInstance()).getName())
          .isEqualTo("csi.soko.dev");
    }

    assertThat(methodThreads).hasSize(5).containsOnly("test-call-thread");
    assertThat(recorded).hasSize(5).containsOnly("GetPluginInfo=OK");
  }

  @Test
  void aCallIsHandedOffOnceEvenWhenTheExecutorIsFreeBeforeItsNextStepArrives() throws Exception {
    // An executor that finishes each task before the I/O thread goes on is the case the driver
    // meets when a call thread wakes before the next frame is decoded: gRPC's own executor path
    // then hands off the method lookup, the message and the half-close separately.
    IdentityGrpc.IdentityBlockingStub identity =
        serve(
            task -> {
              handOffs.incrementAndGet();
              try {
                calls.submit(task).get(5, TimeUnit.SECONDS);
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            });

    for (int i = 0; i < 5; i++) {
      // With a deadline, as kubelet and the sidecars send every call.
      identity
          .withDeadlineAfter(30, TimeUnit.SECONDS)
          .getPluginInfo(Csi.GetPluginInfoRequest.getDefaultInstance());
    }

    assertThat(handOffs).as("hand-offs for 5 calls").hasValue(5);
    assertThat(methodThreads).hasSize(5).containsOnly("test-call-thread");
  }

  @Test
  void aFailureOnTheCallExecutorStillPassesTheErrorBoundary() throws Exception {
    IdentityGrpc.IdentityBlockingStub identity = serve(counted());

    StatusRuntimeException failure =
        catchThrowableOfType(
            StatusRuntimeException.class,
            () -> identity.probe(Csi.ProbeRequest.getDefaultInstance()));

    assertThat(failure.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(methodThreads).containsExactly("test-call-thread");
    assertThat(recorded).containsExactly("Probe=INVALID_ARGUMENT");
  }

  @Test
  void aCallTheExecutorRefusesIsUnavailableAndItsCodeNeverRuns() throws Exception {
    IdentityGrpc.IdentityBlockingStub identity =
        serve(
            task -> {
              throw new RejectedExecutionException("more than 1024 CSI calls are waiting");
            });

    StatusRuntimeException failure =
        catchThrowableOfType(
            StatusRuntimeException.class,
            () -> identity.getPluginInfo(Csi.GetPluginInfoRequest.getDefaultInstance()));

    assertThat(failure.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(failure.getStatus().getDescription()).contains("1024 CSI calls are waiting");
    assertThat(methodThreads).isEmpty();
  }

  @Test
  void refusesAServiceWhoseClientStreamsSinceItsCodeWouldRunOnTheIoThread() {
    MethodDescriptor.Marshaller<String> text =
        new MethodDescriptor.Marshaller<>() {
          @Override
          public InputStream stream(String value) {
            return new ByteArrayInputStream(
                value.getBytes(java.nio.charset.StandardCharsets.UTF_8));
          }

          @Override
          public String parse(InputStream stream) {
            return "";
          }
        };
    MethodDescriptor<String, String> upload =
        MethodDescriptor.<String, String>newBuilder(text, text)
            .setType(MethodDescriptor.MethodType.CLIENT_STREAMING)
            .setFullMethodName("test.Uploads/Upload")
            .build();
    ServerServiceDefinition streaming =
        ServerServiceDefinition.builder("test.Uploads")
            .addMethod(upload, ServerCalls.asyncClientStreamingCall(observer -> observer))
            .build();

    assertThatThrownBy(() -> new CallHandOff(calls).intercept(streaming))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("test.Uploads/Upload is CLIENT_STREAMING");
  }
}
