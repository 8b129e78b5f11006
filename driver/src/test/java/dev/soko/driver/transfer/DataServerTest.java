package dev.soko.driver.transfer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.soko.data.v1.DataProto.ReadReply;
import dev.soko.data.v1.DataProto.ReadRequest;
import dev.soko.data.v1.DataProto.SnapshotRef;
import dev.soko.data.v1.DataProto.TreeReply;
import dev.soko.data.v1.DataProto.VolumeRef;
import dev.soko.data.v1.SnapshotDataGrpc;
import dev.soko.driver.extent.ByteRange;
import dev.soko.driver.metrics.RpcMetrics;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.transfer.DataServer.Served;
import dev.soko.driver.volume.RemoteSnapshot;
import dev.soko.driver.volume.StorageException;
import dev.soko.driver.volume.StorageException.Reason;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Random;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The data port over real mutual TLS on loopback, with certificates made here, in front of snapshot
 * images in plain files: who may call, and what a copy receives when all goes well, when the port
 * stops mid-stream and when the snapshot is deleted while it is read.
 */
class DataServerTest {
  static final long MIB = 1 << 20;
  static final long SIZE = 16 * MIB;
  static final long LARGE = 64 * MIB;

  @TempDir Path dir;
  TestCertificates.Ca ca;
  DataTls serverTls;
  DataServer server;
  FakeImages images = new FakeImages();
  final List<AutoCloseable> closing = new ArrayList<>();

  @BeforeEach
  void serve() throws Exception {
    ca = TestCertificates.ca("soko-data-ca");
    serverTls = DataTls.load(TestCertificates.directory(dir.resolve("node-a"), ca, Roles.NODE));
    server =
        DataServer.start(
            "127.0.0.1:0", serverTls, Served.images(images), "node-a", RpcMetrics.NONE);
    Path image = dir.resolve("snap-1.img");
    try (RandomAccessFile file = new RandomAccessFile(image.toFile(), "rw")) {
      file.setLength(SIZE);
    }
    write(image, 0, (int) (2 * MIB + 4096));
    write(image, 10 * MIB, 4096);
    images.add(
        "snap-1",
        image,
        SIZE,
        List.of(new ByteRange(0, 2 * MIB + 4096), new ByteRange(10 * MIB, 4096)));
  }

  /**
   * A snapshot of {@link #LARGE} bytes, all data: many more chunks than a stream's flow-control
   * window holds, so a test that acts after the second chunk acts before the last left the port.
   */
  void addLarge() throws IOException {
    Path image = dir.resolve("large.img");
    Files.createFile(image);
    for (long at = 0; at < LARGE; at += 8 * MIB) {
      write(image, at, (int) (8 * MIB));
    }
    images.add("snap-large", image, LARGE, List.of(new ByteRange(0, LARGE)));
  }

  @AfterEach
  void stop() throws Exception {
    for (AutoCloseable c : closing) {
      c.close();
    }
    server.close();
    serverTls.close();
  }

  static void write(Path file, long offset, int length) throws IOException {
    byte[] bytes = new byte[length];
    new Random(offset).nextBytes(bytes);
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
      ByteBuffer buffer = ByteBuffer.wrap(bytes);
      while (buffer.hasRemaining()) {
        channel.write(buffer, offset + buffer.position());
      }
    }
  }

  /** A reader holding a certificate of {@code cn} signed by {@code signer}, trusting {@code ca}. */
  SnapshotReader reader(String name, TestCertificates.Ca signer, String cn) throws Exception {
    return reader(name, signer, cn, channel -> channel);
  }

  SnapshotReader reader(
      String name,
      TestCertificates.Ca signer,
      String cn,
      Function<ManagedChannel, ManagedChannel> hook)
      throws Exception {
    DataTls tls = DataTls.load(TestCertificates.directory(dir.resolve(name), signer, cn, ca));
    SnapshotReader reader =
        new SnapshotReader(
            endpoint ->
                hook.apply(
                    NettyChannelBuilder.forTarget(endpoint, tls.channelCredentials())
                        .maxInboundMessageSize(SnapshotReader.MAX_REPLY_BYTES)
                        .build()),
            Duration.ofSeconds(30),
            new Resumes(2, Duration.ofMillis(50)));
    closing.add(reader);
    closing.add(tls);
    return reader;
  }

  @Test
  void aNodeCopiesASnapshotAsItsBytesWithItsHolesKept() throws Exception {
    RemoteSnapshot snapshot =
        reader("node-b", ca, Roles.NODE)
            .describe("node-a", server.endpoint(), "snap-1")
            .orElseThrow();
    assertThat(snapshot.sizeBytes()).isEqualTo(SIZE);
    assertThat(snapshot.accessType()).isEqualTo(AccessType.BLOCK);
    assertThat(snapshot.node()).isEqualTo("node-a");

    Path copy = dir.resolve("copy.img");
    snapshot.copyTo(copy);

    assertThat(Files.size(copy)).isEqualTo(SIZE);
    assertThat(Files.mismatch(copy, dir.resolve("snap-1.img"))).isEqualTo(-1);
  }

  @Test
  void theStreamIsChunksOfAtMostOneMibInsideTheRangesThenAnEndThatCountsThem() throws Exception {
    DataTls tls =
        DataTls.load(TestCertificates.directory(dir.resolve("raw"), ca, Roles.CONTROLLER));
    closing.add(tls);
    ManagedChannel channel =
        NettyChannelBuilder.forTarget(server.endpoint(), tls.channelCredentials()).build();
    closing.add(channel::shutdownNow);
    List<ReadReply> replies = new ArrayList<>();
    SnapshotDataGrpc.newBlockingStub(channel)
        .read(ReadRequest.newBuilder().setSnapshotId("snap-1").build())
        .forEachRemaining(replies::add);

    assertThat(replies)
        .extracting(r -> r.getChunk().getOffset(), r -> (long) r.getChunk().getData().size())
        .startsWith(
            org.assertj.core.groups.Tuple.tuple(0L, MIB),
            org.assertj.core.groups.Tuple.tuple(MIB, MIB),
            org.assertj.core.groups.Tuple.tuple(2 * MIB, 4096L),
            org.assertj.core.groups.Tuple.tuple(10 * MIB, 4096L));
    assertThat(replies).hasSize(5);
    assertThat(replies.get(4).getEnd().getChunks()).isEqualTo(4);
    assertThat(replies.get(4).getEnd().getSizeBytes()).isEqualTo(SIZE);
  }

  @Test
  void aReaderThatTakesNothingMoreHoldsTheReadsNotTheServersMemory() throws Exception {
    addLarge();
    DataTls tls = DataTls.load(TestCertificates.directory(dir.resolve("slow"), ca, Roles.NODE));
    closing.add(tls);
    // The channel a copy reads with, and its flow-control window.
    ManagedChannel channel = SnapshotReader.dial(server.endpoint(), tls);
    closing.add(channel::shutdownNow);
    java.util.concurrent.CountDownLatch first = new java.util.concurrent.CountDownLatch(1);
    SnapshotDataGrpc.newStub(channel)
        .read(
            ReadRequest.newBuilder().setSnapshotId("snap-large").build(),
            new io.grpc.stub.ClientResponseObserver<ReadRequest, ReadReply>() {
              @Override
              public void beforeStart(io.grpc.stub.ClientCallStreamObserver<ReadRequest> call) {
                call.disableAutoRequestWithInitial(1);
              }

              @Override
              public void onNext(ReadReply reply) {
                first.countDown();
              }

              @Override
              public void onError(Throwable t) {}

              @Override
              public void onCompleted() {}
            });
    assertThat(first.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
    Thread.sleep(500);

    // 64 chunks wait to be read; only what the stream's window holds was, and the one being made.
    int read = images.presenceChecks.get();
    assertThat(read).isBetween(1, SnapshotReader.WINDOW_BYTES / ChunkReader.MAX_CHUNK + 2);
  }

  /**
   * Opens a read of {@code snapshotId} that takes its first message and no more, so that it stays
   * open; the returned call cancels it.
   */
  io.grpc.stub.ClientCallStreamObserver<ReadRequest> holdRead(
      ManagedChannel channel, String snapshotId) throws InterruptedException {
    java.util.concurrent.CountDownLatch first = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.atomic.AtomicReference<io.grpc.stub.ClientCallStreamObserver<ReadRequest>>
        held = new java.util.concurrent.atomic.AtomicReference<>();
    SnapshotDataGrpc.newStub(channel)
        .read(
            ReadRequest.newBuilder().setSnapshotId(snapshotId).build(),
            new io.grpc.stub.ClientResponseObserver<ReadRequest, ReadReply>() {
              @Override
              public void beforeStart(io.grpc.stub.ClientCallStreamObserver<ReadRequest> call) {
                held.set(call);
                call.disableAutoRequestWithInitial(1);
              }

              @Override
              public void onNext(ReadReply reply) {
                first.countDown();
              }

              @Override
              public void onError(Throwable t) {}

              @Override
              public void onCompleted() {}
            });
    assertThat(first.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
    return held.get();
  }

  @Test
  void readsBeyondThePortsLimitAreRefusedAtOnceAndASlotComesBackWhenAReadEnds() throws Exception {
    server.close();
    server =
        DataServer.start(
            "127.0.0.1:0", serverTls, new Served(images, null, null, 2), "node-a", RpcMetrics.NONE);
    addLarge();
    DataTls tls = DataTls.load(TestCertificates.directory(dir.resolve("busy"), ca, Roles.NODE));
    closing.add(tls);
    ManagedChannel channel =
        NettyChannelBuilder.forTarget(server.endpoint(), tls.channelCredentials())
            .maxInboundMessageSize(SnapshotReader.MAX_REPLY_BYTES)
            .build();
    closing.add(channel::shutdownNow);
    var one = holdRead(channel, "snap-large");
    holdRead(channel, "snap-large");

    Iterator<ReadReply> third =
        SnapshotDataGrpc.newBlockingStub(channel)
            .read(ReadRequest.newBuilder().setSnapshotId("snap-1").build());
    assertThatThrownBy(third::hasNext)
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
              assertThat(e.getStatus().getDescription())
                  .contains("node-a", "2 reads", "--data-max-reads");
            });
    // A tree of files is a read too.
    Iterator<TreeReply> tree =
        SnapshotDataGrpc.newBlockingStub(channel)
            .readTree(SnapshotRef.newBuilder().setSnapshotId("snap-1").build());
    assertThatThrownBy(tree::hasNext)
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED));
    SnapshotReader reader = reader("node-b", ca, Roles.NODE);
    RemoteSnapshot snapshot =
        reader.describe("node-a", server.endpoint(), "snap-1").orElseThrow(); // not a read
    StorageException busy =
        catchThrowableOfType(StorageException.class, () -> snapshot.copyTo(dir.resolve("no.img")));
    assertThat(busy.reason())
        .as("the reading node's CreateVolume is retried, not rescheduled as if it were full")
        .isEqualTo(Reason.UNAVAILABLE);
    assertThat(busy.getMessage()).contains("node-a", "cannot serve it now", "--data-max-reads");

    one.cancel("done", null);
    Path copy = dir.resolve("copy.img");
    await(
        () -> {
          try {
            Files.deleteIfExists(copy);
            snapshot.copyTo(copy);
            return true;
          } catch (StorageException | IOException e) {
            return false;
          }
        });
    assertThat(Files.mismatch(copy, dir.resolve("snap-1.img"))).isEqualTo(-1);
  }

  @Test
  void aCertificateOfAnotherCaIsRefusedAndTheServerKeepsServing() throws Exception {
    TestCertificates.Ca stranger = TestCertificates.ca("soko-data-ca");
    StorageException refused =
        catchThrowableOfType(
            StorageException.class,
            () ->
                reader("stranger", stranger, Roles.NODE)
                    .describe("node-a", server.endpoint(), "snap-1"));

    assertThat(refused.reason()).isEqualTo(Reason.UNAVAILABLE);
    assertThat(refused.getMessage()).contains("node-a", server.endpoint());
    assertThat(reader("node-b", ca, Roles.NODE).describe("node-a", server.endpoint(), "snap-1"))
        .isPresent();
  }

  @Test
  void aCertificateWhoseCnIsNoRoleIsPermissionDeniedAndTheControllerIsLetIn() throws Exception {
    StorageException denied =
        catchThrowableOfType(
            StorageException.class,
            () -> reader("user", ca, "someone").describe("node-a", server.endpoint(), "snap-1"));

    assertThat(denied.reason()).isEqualTo(Reason.FAILED_PRECONDITION);
    assertThat(denied.getMessage())
        .contains("refused this node's certificate", "someone", "soko-node", "soko-controller");
    DataTls tls = DataTls.load(TestCertificates.directory(dir.resolve("raw"), ca, "someone"));
    closing.add(tls);
    ManagedChannel channel =
        NettyChannelBuilder.forTarget(server.endpoint(), tls.channelCredentials()).build();
    closing.add(channel::shutdownNow);
    Iterator<ReadReply> read =
        SnapshotDataGrpc.newBlockingStub(channel)
            .read(ReadRequest.newBuilder().setSnapshotId("snap-1").build());
    assertThatThrownBy(read::hasNext)
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED));
    assertThat(
            reader("controller", ca, Roles.CONTROLLER)
                .describe("node-a", server.endpoint(), "snap-1"))
        .isPresent();
  }

  @Test
  void aNodeClonesAVolumeFromItsReadCopyWhichGoesWhenTheStreamEnds() throws Exception {
    images.addVolume(
        "vol-1",
        dir.resolve("snap-1.img"),
        SIZE,
        List.of(new ByteRange(0, 2 * MIB + 4096), new ByteRange(10 * MIB, 4096)));
    SnapshotReader reader = reader("node-b", ca, Roles.NODE);
    RemoteSnapshot volume =
        reader.describeVolume("node-a", server.endpoint(), "vol-1").orElseThrow();
    Path copy = dir.resolve("clone.img");

    volume.copyTo(copy);

    assertThat(volume.ofVolume()).isTrue();
    assertThat(volume.shown()).isEqualTo("volume vol-1");
    assertThat(volume.sizeBytes()).isEqualTo(SIZE);
    assertThat(Files.mismatch(copy, dir.resolve("snap-1.img"))).isEqualTo(-1);
    assertThat(images.copiesMade).hasValue(1);
    await(() -> images.copiesRemoved.get() == 1);
    assertThat(reader.describeVolume("node-a", server.endpoint(), "vol-unknown")).isEmpty();
  }

  @Test
  void onlyNodesMayReadVolumes() throws Exception {
    images.addVolume("vol-1", dir.resolve("snap-1.img"), SIZE, List.of());
    StorageException denied =
        catchThrowableOfType(
            StorageException.class,
            () ->
                reader("controller", ca, Roles.CONTROLLER)
                    .describeVolume("node-a", server.endpoint(), "vol-1"));
    assertThat(denied.reason()).isEqualTo(Reason.FAILED_PRECONDITION);
    assertThat(denied.getMessage()).contains("soko-controller", "DescribeVolume");

    DataTls tls =
        DataTls.load(TestCertificates.directory(dir.resolve("raw"), ca, Roles.CONTROLLER));
    closing.add(tls);
    ManagedChannel channel =
        NettyChannelBuilder.forTarget(server.endpoint(), tls.channelCredentials()).build();
    closing.add(channel::shutdownNow);
    Iterator<ReadReply> read =
        SnapshotDataGrpc.newBlockingStub(channel)
            .readVolume(VolumeRef.newBuilder().setVolumeId("vol-1").build());
    assertThatThrownBy(read::hasNext)
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED));
    for (Iterator<TreeReply> treeRead :
        List.of(
            SnapshotDataGrpc.newBlockingStub(channel)
                .readVolumeTree(VolumeRef.newBuilder().setVolumeId("vol-1").build()),
            SnapshotDataGrpc.newBlockingStub(channel)
                .readTree(SnapshotRef.newBuilder().setSnapshotId("snap-1").build()))) {
      assertThatThrownBy(treeRead::hasNext)
          .isInstanceOfSatisfying(
              StatusRuntimeException.class,
              e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED));
    }
    assertThat(images.copiesMade).as("no copy made for a refused caller").hasValue(0);
  }

  @Test
  void aReadOfAVolumeCancelledMidStreamRemovesItsCopy() throws Exception {
    addLarge();
    images.addVolume(
        "vol-large", dir.resolve("large.img"), LARGE, List.of(new ByteRange(0, LARGE)));
    DataTls tls = DataTls.load(TestCertificates.directory(dir.resolve("raw"), ca, Roles.NODE));
    closing.add(tls);
    ManagedChannel channel =
        NettyChannelBuilder.forTarget(server.endpoint(), tls.channelCredentials())
            .maxInboundMessageSize(SnapshotReader.MAX_REPLY_BYTES)
            .build();
    closing.add(channel::shutdownNow);
    Context.CancellableContext call = Context.current().withCancellation();
    call.run(
        () -> {
          Iterator<ReadReply> read =
              SnapshotDataGrpc.newBlockingStub(channel)
                  .readVolume(VolumeRef.newBuilder().setVolumeId("vol-large").build());
          read.next();
          read.next();
        });
    assertThat(images.copiesMade).hasValue(1);
    assertThat(images.copiesRemoved).as("still read").hasValue(0);

    call.cancel(null);

    await(() -> images.copiesRemoved.get() == 1);
  }

  /**
   * Waits up to ten seconds for {@code done}: the server sees a cancel a moment after it is sent.
   */
  static void await(java.util.function.BooleanSupplier done) throws InterruptedException {
    long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (!done.getAsBoolean() && System.nanoTime() < until) {
      Thread.sleep(20);
    }
    assertThat(done.getAsBoolean()).as("done within ten seconds").isTrue();
  }

  @Test
  void anUnknownSnapshotIsNotHeldAndItsReadIsNotFound() throws Exception {
    SnapshotReader reader = reader("node-b", ca, Roles.NODE);
    assertThat(reader.describe("node-a", server.endpoint(), "snap-unknown")).isEmpty();

    images.add("snap-2", dir.resolve("snap-1.img"), SIZE, List.of());
    RemoteSnapshot gone = reader.describe("node-a", server.endpoint(), "snap-2").orElseThrow();
    images.delete("snap-2");
    StorageException notFound =
        catchThrowableOfType(StorageException.class, () -> gone.copyTo(dir.resolve("copy.img")));
    assertThat(notFound.reason()).isEqualTo(Reason.NOT_FOUND);
  }

  @Test
  void anEndpointThatAnswersAsAnotherNodeIsNotTrusted() throws Exception {
    StorageException stale =
        catchThrowableOfType(
            StorageException.class,
            () -> reader("node-b", ca, Roles.NODE).describe("node-c", server.endpoint(), "snap-1"));
    assertThat(stale.reason()).isEqualTo(Reason.UNAVAILABLE);
    assertThat(stale.getMessage()).contains("node-a", "node-c", server.endpoint());
  }

  @Test
  void aPortThatIsNotThereIsUnavailableNamingTheNodeAndEndpoint() throws Exception {
    SnapshotReader reader = reader("node-b", ca, Roles.NODE);
    String endpoint = server.endpoint();
    server.close();
    StorageException unreachable =
        catchThrowableOfType(
            StorageException.class, () -> reader.describe("node-a", endpoint, "snap-1"));
    assertThat(unreachable.reason()).isEqualTo(Reason.UNAVAILABLE);
    assertThat(unreachable.getMessage()).contains("node-a", endpoint);
    server =
        DataServer.start(
            "127.0.0.1:0", serverTls, Served.images(images), "node-a", RpcMetrics.NONE);
  }

  @Test
  void aPortClosedMidStreamFailsTheCopyInsteadOfLeavingAShortFileAsDone() throws Exception {
    addLarge();
    RemoteSnapshot snapshot =
        reader("node-b", ca, Roles.NODE, channel -> new HookedChannel(channel, 2, server::close))
            .describe("node-a", server.endpoint(), "snap-large")
            .orElseThrow();

    StorageException cut =
        catchThrowableOfType(
            StorageException.class, () -> snapshot.copyTo(dir.resolve("copy.img")));

    assertThat(cut.reason()).isEqualTo(Reason.UNAVAILABLE);
    assertThat(cut.getMessage()).contains("snap-large", "node-a", server.endpoint());
    server =
        DataServer.start(
            "127.0.0.1:0", serverTls, Served.images(images), "node-a", RpcMetrics.NONE);
  }

  @Test
  void aSnapshotDeletedWhileItIsReadEndsTheCopyWithNotFound() throws Exception {
    addLarge();
    RemoteSnapshot snapshot =
        reader(
                "node-b",
                ca,
                Roles.NODE,
                channel -> new HookedChannel(channel, 2, () -> images.delete("snap-large")))
            .describe("node-a", server.endpoint(), "snap-large")
            .orElseThrow();

    StorageException gone =
        catchThrowableOfType(
            StorageException.class, () -> snapshot.copyTo(dir.resolve("copy.img")));

    assertThat(gone.reason()).isEqualTo(Reason.NOT_FOUND);
    assertThat(gone.getMessage()).contains("snap-large", "deleted");
  }

  @Test
  void credentialsWithAFileMissingAreRefusedNamingIt() throws Exception {
    Path tls = TestCertificates.directory(dir.resolve("incomplete"), ca, Roles.NODE);
    Files.delete(tls.resolve("ca.crt"));
    assertThatThrownBy(() -> DataTls.load(tls))
        .isInstanceOf(IOException.class)
        .hasMessageContaining(tls.resolve("ca.crt").toString());
  }
}
