package dev.soko.driver.csi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import csi.v1.Csi;
import csi.v1.IdentityGrpc;
import csi.v1.SnapshotMetadataGrpc;
import dev.soko.driver.config.Endpoint;
import dev.soko.driver.extent.ByteRange;
import dev.soko.driver.extent.RangeCursor;
import dev.soko.driver.health.Readiness;
import dev.soko.driver.metrics.RpcMetrics;
import dev.soko.driver.server.DriverServer;
import dev.soko.driver.volume.BlockStream;
import dev.soko.driver.volume.SnapshotBlocks;
import dev.soko.driver.volume.StorageException;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The SnapshotMetadata service on the real server and socket (the call hand-off and flow control
 * that streams go through), over an engine whose snapshots are made of ranges counted out here.
 */
class SnapshotMetadataServiceTest {
  private static final long K = 4096;

  @TempDir Path temp;
  private final EventLoopGroup clientLoop = new EpollEventLoopGroup(1);
  private final Blocks blocks = new Blocks();
  private DriverServer server;
  private ManagedChannel channel;

  /** Snapshot "snap-N" has N one-block ranges, two blocks apart; "snap-gone" is deleted midway. */
  private static final class Blocks implements SnapshotBlocks {
    final AtomicInteger open = new AtomicInteger();
    final AtomicInteger read = new AtomicInteger();
    final AtomicBoolean deleted = new AtomicBoolean();

    @Override
    public boolean servesBlockMetadata() {
      return true;
    }

    @Override
    public BlockStream allocatedBlocks(String snapshotId, long startingOffset) {
      if (!snapshotId.startsWith("snap-")) {
        throw StorageException.notFound("snapshot %s does not exist", snapshotId);
      }
      int count =
          snapshotId.equals("snap-gone") ? 100_000 : Integer.parseInt(snapshotId.substring(5));
      if (startingOffset > count * 2 * K) {
        throw StorageException.outOfRange("starting_offset %d is outside", startingOffset);
      }
      return stream(count, startingOffset);
    }

    @Override
    public BlockStream changedBlocks(String base, String target, long startingOffset) {
      if (!base.equals(target)) {
        throw StorageException.invalid("%s and %s are of different volumes", base, target);
      }
      return allocatedBlocks(target, startingOffset);
    }

    private BlockStream stream(int count, long from) {
      open.incrementAndGet();
      RangeCursor cursor =
          new RangeCursor() {
            private long block = from / (2 * K);

            @Override
            public Optional<ByteRange> next() {
              if (block >= count) {
                return Optional.empty();
              }
              read.incrementAndGet();
              return Optional.of(new ByteRange(block++ * 2 * K, K));
            }

            @Override
            public void close() {
              open.decrementAndGet();
            }
          };
      return new BlockStream(
          count * 2 * K,
          cursor,
          () -> deleted.get() ? Optional.of("snapshot was deleted") : Optional.empty());
    }
  }

  @BeforeEach
  void start() throws Exception {
    Path socket = temp.resolve("csi.sock");
    server =
        DriverServer.start(
            new Endpoint(socket),
            List.of(
                new IdentityService("csi.soko.dev", "t", Readiness.ALWAYS, true, true),
                new SnapshotMetadataService(blocks)),
            RpcMetrics.NONE,
            () -> true,
            4);
    channel =
        NettyChannelBuilder.forAddress(new DomainSocketAddress(socket.toString()))
            .channelType(EpollDomainSocketChannel.class)
            .eventLoopGroup(clientLoop)
            .usePlaintext()
            .build();
  }

  @AfterEach
  void stop() throws Exception {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    server.shutdown(Duration.ofSeconds(5));
    clientLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
  }

  private SnapshotMetadataGrpc.SnapshotMetadataBlockingStub stub() {
    return SnapshotMetadataGrpc.newBlockingStub(channel);
  }

  private static Csi.GetMetadataAllocatedRequest allocated(String id, long from, int max) {
    return Csi.GetMetadataAllocatedRequest.newBuilder()
        .setSnapshotId(id)
        .setStartingOffset(from)
        .setMaxResults(max)
        .build();
  }

  private static Status.Code code(Runnable call) {
    return catchThrowableOfType(StatusRuntimeException.class, call::run).getStatus().getCode();
  }

  @Test
  void theServiceIsAdvertised() {
    assertThat(
            IdentityGrpc.newBlockingStub(channel)
                .getPluginCapabilities(Csi.GetPluginCapabilitiesRequest.getDefaultInstance())
                .getCapabilitiesList())
        .extracting(c -> c.getService().getType())
        .contains(Csi.PluginCapability.Service.Type.SNAPSHOT_METADATA_SERVICE);
  }

  @Test
  void aLargeAnswerStreamsInMessagesOfAtMostMaxResultsInIncreasingOrder() throws Exception {
    List<Csi.GetMetadataAllocatedResponse> messages = new ArrayList<>();
    stub().getMetadataAllocated(allocated("snap-50000", 0, 7)).forEachRemaining(messages::add);

    List<Csi.BlockMetadata> ranges =
        messages.stream().flatMap(m -> m.getBlockMetadataList().stream()).toList();
    assertThat(ranges).hasSize(50_000);
    assertThat(messages).allMatch(m -> m.getBlockMetadataCount() <= 7);
    assertThat(messages)
        .allMatch(
            m ->
                m.getBlockMetadataType() == Csi.BlockMetadataType.VARIABLE_LENGTH
                    && m.getVolumeCapacityBytes() == 50_000 * 2 * K);
    for (int i = 1; i < ranges.size(); i++) {
      Csi.BlockMetadata before = ranges.get(i - 1);
      assertThat(before.getByteOffset() + before.getSizeBytes())
          .isLessThan(ranges.get(i).getByteOffset());
    }
    assertThat(blocks.open.get()).isZero();
  }

  @Test
  void anAnswerWithNoRangesStillSaysTheCapacityAndTheStartingOffsetIsKept() {
    List<Csi.GetMetadataAllocatedResponse> empty = new ArrayList<>();
    stub().getMetadataAllocated(allocated("snap-0", 0, 0)).forEachRemaining(empty::add);
    List<Csi.GetMetadataDeltaResponse> resumed = new ArrayList<>();
    stub()
        .getMetadataDelta(
            Csi.GetMetadataDeltaRequest.newBuilder()
                .setBaseSnapshotId("snap-10")
                .setTargetSnapshotId("snap-10")
                .setStartingOffset(8 * 2 * K)
                .build())
        .forEachRemaining(resumed::add);

    assertThat(empty).hasSize(1);
    assertThat(empty.get(0).getBlockMetadataCount()).isZero();
    assertThat(resumed.get(0).getBlockMetadata(0).getByteOffset()).isEqualTo(8 * 2 * K);
    assertThat(resumed.stream().mapToInt(Csi.GetMetadataDeltaResponse::getBlockMetadataCount).sum())
        .isEqualTo(2);
  }

  @Test
  void badRequestsAreRefusedWithTheSpecsCodes() {
    assertThat(code(() -> stub().getMetadataAllocated(allocated("", 0, 0)).hasNext()))
        .isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(code(() -> stub().getMetadataAllocated(allocated("snap-1", 0, -1)).hasNext()))
        .isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(code(() -> stub().getMetadataAllocated(allocated("nope", 0, 0)).hasNext()))
        .isEqualTo(Status.Code.NOT_FOUND);
    assertThat(code(() -> stub().getMetadataAllocated(allocated("snap-1", 1 << 30, 0)).hasNext()))
        .isEqualTo(Status.Code.OUT_OF_RANGE);
    assertThat(
            code(
                () ->
                    stub()
                        .getMetadataDelta(
                            Csi.GetMetadataDeltaRequest.newBuilder()
                                .setBaseSnapshotId("snap-1")
                                .setTargetSnapshotId("snap-2")
                                .build())
                        .hasNext()))
        .isEqualTo(Status.Code.INVALID_ARGUMENT);
  }

  @Test
  void aSnapshotDeletedWhileItIsReadEndsTheStreamWithNotFound() {
    Iterator<Csi.GetMetadataAllocatedResponse> answer =
        stub().getMetadataAllocated(allocated("snap-gone", 0, 1));
    answer.next();
    blocks.deleted.set(true);
    AtomicReference<Status.Code> ended = new AtomicReference<>();
    try {
      answer.forEachRemaining(m -> {});
    } catch (StatusRuntimeException e) {
      ended.set(e.getStatus().getCode());
    }

    assertThat(ended.get()).isEqualTo(Status.Code.NOT_FOUND);
    assertThat(blocks.open.get()).isZero();
  }

  @Test
  void aClientThatStopsReadingHoldsTheStreamNotTheDriversMemory() throws Exception {
    Iterator<Csi.GetMetadataAllocatedResponse> answer =
        stub().getMetadataAllocated(allocated("snap-1000000", 0, 1));
    answer.next();
    Thread.sleep(500);

    // Flow control: the driver read no more than gRPC's windows hold, far from a million.
    assertThat(blocks.read.get()).isLessThan(200_000);
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    for (int i = 0; i < 100 && blocks.open.get() != 0; i++) {
      Thread.sleep(20);
    }
    assertThat(blocks.open.get()).as("a cancelled stream releases its files").isZero();
  }
}
