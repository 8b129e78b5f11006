package dev.soko.driver.transfer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import csi.v1.Csi;
import csi.v1.SnapshotMetadataGrpc;
import dev.soko.driver.report.SnapshotHomes.Home;
import dev.soko.driver.server.PacedReply;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class SnapshotMetadataRelayTest {
  private static final String NODE_PORT = "relay-test-node-a";
  private static final String NODE_B_PORT = "relay-test-node-b";
  private static final String NOWHERE = "relay-test-nowhere";

  private final FakeNode node = new FakeNode();
  private final List<ManagedChannel> channels = new ArrayList<>();
  private Server nodeServer;
  private Server relayServer;
  private SnapshotMetadataRelay relay;
  private SnapshotMetadataGrpc.SnapshotMetadataBlockingStub client;
  private SnapshotMetadataGrpc.SnapshotMetadataBlockingStub direct;

  private final Map<String, Home> homes =
      Map.of(
          "snap-a", new Home("node-a", NODE_PORT),
          "snap-b", new Home("node-a", NODE_PORT),
          "snap-far", new Home("node-b", NODE_B_PORT),
          "snap-lost", new Home("node-c", NOWHERE),
          "snap-gone", new Home("node-a", NODE_PORT),
          "snap-endless", new Home("node-a", NODE_PORT));

  @BeforeEach
  void start() throws Exception {
    nodeServer = InProcessServerBuilder.forName(NODE_PORT).addService(node).build().start();
    relay =
        new SnapshotMetadataRelay(
            id -> Optional.ofNullable(homes.get(id)), endpoint -> channel(endpoint));
    relayServer =
        InProcessServerBuilder.forName("relay-test-relay").addService(relay).build().start();
    client = SnapshotMetadataGrpc.newBlockingStub(channel("relay-test-relay"));
    direct = SnapshotMetadataGrpc.newBlockingStub(channel(NODE_PORT));
  }

  @AfterEach
  void stop() throws Exception {
    channels.forEach(ManagedChannel::shutdownNow);
    relay.close();
    relayServer.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    nodeServer.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }

  @Test
  void relaysTheNodesAllocatedStreamAsItIs() {
    Csi.GetMetadataAllocatedRequest request =
        Csi.GetMetadataAllocatedRequest.newBuilder()
            .setSnapshotId("snap-a")
            .setStartingOffset(8192)
            .setMaxResults(2)
            .build();

    List<Csi.GetMetadataAllocatedResponse> relayed = list(client.getMetadataAllocated(request));

    assertThat(relayed).hasSize(3).isEqualTo(list(direct.getMetadataAllocated(request)));
    assertThat(relayed.get(0).getBlockMetadata(0).getByteOffset()).isEqualTo(8192);
  }

  @Test
  void relaysADeltaToTheTargetsNode() {
    Csi.GetMetadataDeltaRequest request =
        Csi.GetMetadataDeltaRequest.newBuilder()
            .setBaseSnapshotId("snap-a")
            .setTargetSnapshotId("snap-b")
            .setStartingOffset(4096)
            .build();

    List<Csi.GetMetadataDeltaResponse> relayed = list(client.getMetadataDelta(request));

    assertThat(relayed).isEqualTo(list(direct.getMetadataDelta(request)));
    assertThat(node.lastDelta.get()).isEqualTo(request);
  }

  @Test
  void refusesABaseOnAnotherNodeNamingBoth() {
    StatusRuntimeException e =
        failure(
            () ->
                list(
                    client.getMetadataDelta(
                        Csi.GetMetadataDeltaRequest.newBuilder()
                            .setBaseSnapshotId("snap-far")
                            .setTargetSnapshotId("snap-b")
                            .build())));

    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(e.getStatus().getDescription()).contains("snap-far", "node-b", "snap-b", "node-a");
    assertThat(node.lastDelta.get()).isNull();
  }

  @Test
  void anUnknownSnapshotIsNotFound() {
    StatusRuntimeException e = failure(() -> list(client.getMetadataAllocated(allocated("nope"))));

    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND);
    assertThat(e.getStatus().getDescription()).contains("nope");
  }

  @Test
  void aNodeNotReachedIsUnavailableNamingIt() {
    StatusRuntimeException e =
        failure(() -> list(client.getMetadataAllocated(allocated("snap-lost"))));

    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(e.getStatus().getDescription()).contains("node-c", NOWHERE);
  }

  @Test
  void theNodesErrorKeepsItsCode() {
    StatusRuntimeException e =
        failure(() -> list(client.getMetadataAllocated(allocated("snap-gone"))));

    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.OUT_OF_RANGE);
    assertThat(e.getStatus().getDescription()).isEqualTo("starting_offset past the end");
  }

  @Test
  void aClientThatTakesNothingStopsTheNodesReads() throws Exception {
    ClientCall<Csi.GetMetadataAllocatedRequest, Csi.GetMetadataAllocatedResponse> call =
        channel("relay-test-relay")
            .newCall(SnapshotMetadataGrpc.getGetMetadataAllocatedMethod(), CallOptions.DEFAULT);
    CountDownLatch first = new CountDownLatch(1);
    CountDownLatch closed = new CountDownLatch(1);
    AtomicReference<Status> end = new AtomicReference<>();
    call.start(
        new ClientCall.Listener<>() {
          @Override
          public void onMessage(Csi.GetMetadataAllocatedResponse message) {
            first.countDown();
          }

          @Override
          public void onClose(Status status, Metadata trailers) {
            end.set(status);
            closed.countDown();
          }
        },
        new Metadata());
    call.sendMessage(allocated("snap-endless"));
    call.halfClose();
    call.request(1);

    assertThat(first.await(5, TimeUnit.SECONDS)).isTrue();
    Thread.sleep(500);
    // One message with the client, one the relay waits to pass on, one the node holds ready.
    assertThat(node.made.get()).isLessThanOrEqualTo(4);

    call.cancel("done", null);
    assertThat(closed.await(5, TimeUnit.SECONDS)).isTrue();
    assertThat(node.closed.await(5, TimeUnit.SECONDS))
        .as("the client's cancel reaches the node")
        .isTrue();
  }

  private ManagedChannel channel(String name) {
    ManagedChannel channel = InProcessChannelBuilder.forName(name).build();
    channels.add(channel);
    return channel;
  }

  private static Csi.GetMetadataAllocatedRequest allocated(String snapshot) {
    return Csi.GetMetadataAllocatedRequest.newBuilder().setSnapshotId(snapshot).build();
  }

  private static <T> List<T> list(Iterator<T> stream) {
    List<T> all = new ArrayList<>();
    stream.forEachRemaining(all::add);
    return all;
  }

  private static StatusRuntimeException failure(Runnable call) {
    return catchThrowableOfType(StatusRuntimeException.class, call::run);
  }

  /**
   * A node's SnapshotMetadata service: three messages from the starting offset; "snap-gone" fails
   * OUT_OF_RANGE; "snap-endless" streams without end, at the client's pace, counting what it makes.
   */
  private static final class FakeNode extends SnapshotMetadataGrpc.SnapshotMetadataImplBase {
    final AtomicInteger made = new AtomicInteger();
    final CountDownLatch closed = new CountDownLatch(1);
    final AtomicReference<Csi.GetMetadataDeltaRequest> lastDelta = new AtomicReference<>();

    @Override
    public void getMetadataAllocated(
        Csi.GetMetadataAllocatedRequest request,
        StreamObserver<Csi.GetMetadataAllocatedResponse> observer) {
      switch (request.getSnapshotId()) {
        case "snap-gone" ->
            observer.onError(
                Status.OUT_OF_RANGE
                    .withDescription("starting_offset past the end")
                    .asRuntimeException());
        case "snap-endless" -> PacedReply.send(observer, endless(), "endless");
        default -> {
          for (int i = 0; i < 3; i++) {
            observer.onNext(
                Csi.GetMetadataAllocatedResponse.newBuilder()
                    .setBlockMetadataType(Csi.BlockMetadataType.VARIABLE_LENGTH)
                    .setVolumeCapacityBytes(1 << 30)
                    .addBlockMetadata(range(request.getStartingOffset() + i * 65536L))
                    .build());
          }
          observer.onCompleted();
        }
      }
    }

    @Override
    public void getMetadataDelta(
        Csi.GetMetadataDeltaRequest request,
        StreamObserver<Csi.GetMetadataDeltaResponse> observer) {
      lastDelta.set(request);
      observer.onNext(
          Csi.GetMetadataDeltaResponse.newBuilder()
              .setBlockMetadataType(Csi.BlockMetadataType.VARIABLE_LENGTH)
              .setVolumeCapacityBytes(1 << 30)
              .addBlockMetadata(range(request.getStartingOffset()))
              .build());
      observer.onCompleted();
    }

    private PacedReply.Source<Csi.GetMetadataAllocatedResponse> endless() {
      return new PacedReply.Source<>() {
        @Override
        public Optional<Csi.GetMetadataAllocatedResponse> next() {
          long offset = made.getAndIncrement() * 4096L;
          return Optional.of(
              Csi.GetMetadataAllocatedResponse.newBuilder()
                  .setBlockMetadataType(Csi.BlockMetadataType.VARIABLE_LENGTH)
                  .setVolumeCapacityBytes(Long.MAX_VALUE)
                  .addBlockMetadata(range(offset))
                  .build());
        }

        @Override
        public void close() {
          closed.countDown();
        }
      };
    }

    private static Csi.BlockMetadata range(long offset) {
      return Csi.BlockMetadata.newBuilder().setByteOffset(offset).setSizeBytes(4096).build();
    }
  }
}
