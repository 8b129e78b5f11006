package dev.soko.driver.transfer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.google.protobuf.ByteString;
import dev.soko.data.v1.DataProto.AccessType;
import dev.soko.data.v1.DataProto.Chunk;
import dev.soko.data.v1.DataProto.End;
import dev.soko.data.v1.DataProto.ReadReply;
import dev.soko.data.v1.DataProto.ReadRequest;
import dev.soko.data.v1.DataProto.SnapshotFacts;
import dev.soko.data.v1.DataProto.SnapshotRef;
import dev.soko.data.v1.DataProto.VolumeFacts;
import dev.soko.data.v1.DataProto.VolumeRef;
import dev.soko.data.v1.SnapshotDataGrpc;
import dev.soko.driver.volume.RemoteSnapshot;
import dev.soko.driver.volume.StorageException;
import dev.soko.driver.volume.StorageException.Reason;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The reader's side against a port that misbehaves as a broken network or a broken peer would: a
 * copy is done only with every chunk intact and the stream's End, and fails otherwise.
 */
class SnapshotReaderTest {
  static final long SIZE = 8 << 20;

  @TempDir Path dir;
  Server server;
  SnapshotReader reader;

  @AfterEach
  void stop() {
    if (reader != null) {
      reader.close();
    }
    if (server != null) {
      server.shutdownNow();
    }
  }

  /** One stream per copy: the tests of a single stream's checks. */
  static final Resumes NO_RESUMES = new Resumes(0, Duration.ZERO);

  /** A port whose Read sends what {@code read} writes to the observer; a cut stream is final. */
  RemoteSnapshot serving(Consumer<StreamObserver<ReadReply>> read) throws Exception {
    return serving(NO_RESUMES, (request, o) -> read.accept(o));
  }

  /** A port whose Read answers each request as {@code read} does; cut streams resume so. */
  RemoteSnapshot serving(Resumes resumes, BiConsumer<ReadRequest, StreamObserver<ReadReply>> read)
      throws Exception {
    String name = InProcessServerBuilder.generateName();
    server =
        InProcessServerBuilder.forName(name)
            .directExecutor()
            .addService(
                new SnapshotDataGrpc.SnapshotDataImplBase() {
                  @Override
                  public void describe(SnapshotRef request, StreamObserver<SnapshotFacts> o) {
                    if (!request.getSnapshotId().equals("snap-1")) {
                      o.onError(Status.NOT_FOUND.asRuntimeException());
                      return;
                    }
                    o.onNext(
                        SnapshotFacts.newBuilder()
                            .setSnapshotId("snap-1")
                            .setSizeBytes(SIZE)
                            .setAccessType(AccessType.MOUNT)
                            .setFsType("xfs")
                            .setNode("node-a")
                            .build());
                    o.onCompleted();
                  }

                  @Override
                  public void read(ReadRequest request, StreamObserver<ReadReply> o) {
                    read.accept(request, o);
                  }
                })
            .build()
            .start();
    reader =
        new SnapshotReader(
            endpoint -> InProcessChannelBuilder.forName(name).directExecutor().build(),
            Duration.ofMillis(400),
            resumes);
    return reader.describe("node-a", "10.0.0.7:9810", "snap-1").orElseThrow();
  }

  static ReadReply chunk(long offset, byte[] data) {
    CRC32C crc = new CRC32C();
    crc.update(data);
    return chunk(offset, data, (int) crc.getValue());
  }

  static ReadReply chunk(long offset, byte[] data, int crc) {
    return ReadReply.newBuilder()
        .setChunk(
            Chunk.newBuilder().setOffset(offset).setData(ByteString.copyFrom(data)).setCrc32C(crc))
        .build();
  }

  static ReadReply end(long size, long chunks) {
    return ReadReply.newBuilder()
        .setEnd(End.newBuilder().setSizeBytes(size).setChunks(chunks))
        .build();
  }

  static byte[] bytes(int length, int fill) {
    byte[] data = new byte[length];
    java.util.Arrays.fill(data, (byte) fill);
    return data;
  }

  StorageException copyFails(RemoteSnapshot snapshot) {
    return catchThrowableOfType(StorageException.class, () -> snapshot.copyTo(dir.resolve("copy")));
  }

  @Test
  void chunksLandAtTheirOffsetsAndTheFileIsTheSnapshotsSize() throws Exception {
    RemoteSnapshot snapshot =
        serving(
            o -> {
              o.onNext(chunk(4096, bytes(4096, 1)));
              o.onNext(chunk(1 << 20, bytes(8192, 2)));
              o.onNext(end(SIZE, 2));
              o.onCompleted();
            });
    assertThat(snapshot.fsType()).isEqualTo("xfs");
    assertThat(snapshot.accessType()).isEqualTo(dev.soko.driver.model.AccessType.FILESYSTEM);

    snapshot.copyTo(dir.resolve("copy"));

    byte[] copy = Files.readAllBytes(dir.resolve("copy"));
    assertThat(copy).hasSize((int) SIZE);
    assertThat(copy[4095]).isZero();
    assertThat(copy[4096]).isEqualTo((byte) 1);
    assertThat(copy[(1 << 20) + 8191]).isEqualTo((byte) 2);
    assertThat(copy[(1 << 20) + 8192]).isZero();
  }

  @Test
  void aChunkThatFailsItsCrcFailsTheCopy() throws Exception {
    RemoteSnapshot snapshot =
        serving(
            o -> {
              o.onNext(chunk(0, bytes(4096, 1), 12345));
              o.onNext(end(SIZE, 1));
              o.onCompleted();
            });

    StorageException corrupt = copyFails(snapshot);

    assertThat(corrupt.reason()).isEqualTo(Reason.INTERNAL);
    assertThat(corrupt.getMessage()).contains("snap-1", "node-a", "CRC32C", "offset 0");
  }

  @Test
  void aStreamThatClosesWithoutItsEndFailsTheCopy() throws Exception {
    RemoteSnapshot snapshot =
        serving(
            o -> {
              o.onNext(chunk(0, bytes(4096, 1)));
              o.onCompleted();
            });

    StorageException cut = copyFails(snapshot);

    assertThat(cut).as("a copy without the stream's End must fail").isNotNull();
    assertThat(cut.getMessage()).contains("snap-1", "without its end");
  }

  @Test
  void anEndThatCountsOtherChunksOrAnotherSizeFailsTheCopy() throws Exception {
    RemoteSnapshot fewer =
        serving(
            o -> {
              o.onNext(chunk(0, bytes(4096, 1)));
              o.onNext(end(SIZE, 2));
              o.onCompleted();
            });
    assertThat(copyFails(fewer).getMessage()).contains("counts 2 chunks sent, 1 arrived");
    stop();
    Files.delete(dir.resolve("copy"));
    RemoteSnapshot resized =
        serving(
            o -> {
              o.onNext(end(SIZE / 2, 0));
              o.onCompleted();
            });
    assertThat(copyFails(resized).getMessage()).contains("bytes, the description " + SIZE);
  }

  @Test
  void chunksOutOfOrderOrOutsideTheSnapshotFailTheCopy() throws Exception {
    for (List<ReadReply> replies :
        List.of(
            List.of(chunk(8192, bytes(4096, 1)), chunk(4096, bytes(4096, 1))),
            List.of(chunk(SIZE - 4096, bytes(8192, 1))))) {
      RemoteSnapshot snapshot =
          serving(
              o -> {
                replies.forEach(o::onNext);
                o.onNext(end(SIZE, replies.size()));
                o.onCompleted();
              });
      StorageException bad = copyFails(snapshot);
      assertThat(bad.reason()).isEqualTo(Reason.INTERNAL);
      assertThat(bad.getMessage()).contains("out of order or outside");
      stop();
      Files.delete(dir.resolve("copy"));
    }
  }

  @Test
  void aStreamCutByAnErrorIsUnavailableNamingTheNodeAndEndpoint() throws Exception {
    RemoteSnapshot snapshot =
        serving(
            o -> {
              o.onNext(chunk(0, bytes(4096, 1)));
              o.onError(
                  Status.UNAVAILABLE.withDescription("connection reset").asRuntimeException());
            });

    StorageException cut = copyFails(snapshot);

    assertThat(cut.reason()).isEqualTo(Reason.UNAVAILABLE);
    assertThat(cut.getMessage()).contains("snap-1", "node-a", "10.0.0.7:9810", "connection reset");
  }

  @Test
  void aCutStreamIsReadOnFromTheEndOfTheLastChunkThatPassed() throws Exception {
    List<Long> asked = new ArrayList<>();
    RemoteSnapshot snapshot =
        serving(
            new Resumes(2, Duration.ofMillis(10)),
            (request, o) -> {
              asked.add(request.getStartingOffset());
              if (asked.size() == 1) {
                o.onNext(chunk(0, bytes(4096, 1)));
                o.onNext(chunk(1 << 20, bytes(8192, 2)));
                o.onError(
                    Status.UNAVAILABLE.withDescription("connection reset").asRuntimeException());
              } else {
                o.onNext(chunk(3 << 20, bytes(4096, 3)));
                o.onNext(end(SIZE, 1));
                o.onCompleted();
              }
            });

    snapshot.copyTo(dir.resolve("copy"));

    assertThat(asked).containsExactly(0L, (1L << 20) + 8192);
    byte[] copy = Files.readAllBytes(dir.resolve("copy"));
    assertThat(copy).hasSize((int) SIZE);
    assertThat(copy[4095]).isEqualTo((byte) 1);
    assertThat(copy[(1 << 20) + 8191]).isEqualTo((byte) 2);
    assertThat(copy[3 << 20]).isEqualTo((byte) 3);
    assertThat(copy[(3 << 20) + 4096]).isZero();
  }

  @Test
  void aVolumesCutStreamIsReadAgainFromTheStartAndNothingOfTheFirstInstantStays() throws Exception {
    List<String> calls = new ArrayList<>();
    String name = InProcessServerBuilder.generateName();
    server =
        InProcessServerBuilder.forName(name)
            .directExecutor()
            .addService(
                new SnapshotDataGrpc.SnapshotDataImplBase() {
                  @Override
                  public void describeVolume(VolumeRef request, StreamObserver<VolumeFacts> o) {
                    o.onNext(
                        VolumeFacts.newBuilder()
                            .setVolumeId("vol-1")
                            .setSizeBytes(SIZE)
                            .setAccessType(AccessType.BLOCK)
                            .setNode("node-a")
                            .build());
                    o.onCompleted();
                  }

                  @Override
                  public void readVolume(VolumeRef request, StreamObserver<ReadReply> o) {
                    calls.add(request.getVolumeId());
                    if (calls.size() == 1) {
                      o.onNext(chunk(0, bytes(4096, 1)));
                      o.onNext(chunk(2 << 20, bytes(4096, 1)));
                      o.onError(
                          Status.UNAVAILABLE
                              .withDescription("connection reset")
                              .asRuntimeException());
                    } else {
                      // Another instant: the block at 2 MiB was discarded since.
                      o.onNext(chunk(0, bytes(4096, 2)));
                      o.onNext(end(SIZE, 1));
                      o.onCompleted();
                    }
                  }
                })
            .build()
            .start();
    reader =
        new SnapshotReader(
            endpoint -> InProcessChannelBuilder.forName(name).directExecutor().build(),
            Duration.ofMillis(400),
            new Resumes(2, Duration.ofMillis(10)));
    RemoteSnapshot volume = reader.describeVolume("node-a", "10.0.0.7:9810", "vol-1").orElseThrow();

    volume.copyTo(dir.resolve("copy"));

    assertThat(calls).containsExactly("vol-1", "vol-1");
    byte[] copy = Files.readAllBytes(dir.resolve("copy"));
    assertThat(copy).hasSize((int) SIZE);
    assertThat(copy[0]).isEqualTo((byte) 2);
    assertThat(copy[2 << 20]).as("nothing of the first copy's instant").isZero();
  }

  @Test
  void aStreamCutEveryTimeFailsOnceItsResumesAreSpentAndAnAnswerIsNeverResumed() throws Exception {
    List<Long> asked = new ArrayList<>();
    RemoteSnapshot cutAlways =
        serving(
            new Resumes(2, Duration.ofMillis(10)),
            (request, o) -> {
              asked.add(request.getStartingOffset());
              o.onNext(chunk(asked.size() << 20, bytes(4096, 1)));
              o.onError(
                  Status.UNAVAILABLE.withDescription("connection reset").asRuntimeException());
            });
    StorageException cut = copyFails(cutAlways);
    assertThat(cut.reason()).isEqualTo(Reason.UNAVAILABLE);
    assertThat(asked).as("the first stream and two resumes").hasSize(3);
    reader.close();
    server.shutdownNow();

    asked.clear();
    RemoteSnapshot deleted =
        serving(
            new Resumes(2, Duration.ofMillis(10)),
            (request, o) -> {
              asked.add(request.getStartingOffset());
              o.onNext(chunk(0, bytes(4096, 1)));
              o.onError(Status.NOT_FOUND.withDescription("snapshot deleted").asRuntimeException());
            });
    Files.delete(dir.resolve("copy"));
    assertThat(copyFails(deleted).reason()).isEqualTo(Reason.NOT_FOUND);
    assertThat(asked).as("the source's answer is final").hasSize(1);
  }

  @Test
  void aSourceThatStopsSendingIsCutAfterTheStallPeriod() throws Exception {
    RemoteSnapshot snapshot = serving(o -> o.onNext(chunk(0, bytes(4096, 1))));

    long start = System.nanoTime();
    StorageException stalled = copyFails(snapshot);

    assertThat(stalled.reason()).isEqualTo(Reason.UNAVAILABLE);
    assertThat(stalled.getMessage()).contains("nothing arrived");
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
  }

  @Test
  void aCopyNeverWritesOverAnExistingFile() throws Exception {
    RemoteSnapshot snapshot =
        serving(
            o -> {
              o.onNext(end(SIZE, 0));
              o.onCompleted();
            });
    Files.writeString(dir.resolve("copy"), "mine");

    assertThat(copyFails(snapshot).reason()).isEqualTo(Reason.INTERNAL);
    assertThat(Files.readString(dir.resolve("copy"))).isEqualTo("mine");
  }

  @Test
  void aSnapshotTheNodeDoesNotHoldIsEmpty() throws Exception {
    serving(o -> o.onCompleted());
    assertThat(reader.describe("node-a", "10.0.0.7:9810", "snap-2")).isEmpty();
  }
}
