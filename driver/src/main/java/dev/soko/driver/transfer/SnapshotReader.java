package dev.soko.driver.transfer;

import dev.soko.data.v1.DataProto.Form;
import dev.soko.data.v1.DataProto.SnapshotFacts;
import dev.soko.data.v1.DataProto.SnapshotRef;
import dev.soko.data.v1.DataProto.VolumeFacts;
import dev.soko.data.v1.DataProto.VolumeRef;
import dev.soko.data.v1.SnapshotDataGrpc;
import dev.soko.driver.model.AccessType;
import dev.soko.driver.volume.RemoteSnapshot;
import dev.soko.driver.volume.StorageException;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The caller's side of the data path: asks a node's data port what it holds of a snapshot, and
 * hands back a {@link RemoteSnapshot} that copies it from there: its image's ranges, or its tree of
 * files where its form is FILE_TREE. One channel per endpoint, kept for later calls and closed with
 * this reader; this component's certificate ({@link DataTls}) names its role.
 */
public final class SnapshotReader implements AutoCloseable {
  /** A Describe is one lookup in a map: a node that takes longer is not answering. */
  static final Duration DESCRIBE_DEADLINE = Duration.ofSeconds(10);

  /** A copy may take as long as it needs while data arrives; this long without any, it is cut. */
  static final Duration STALL = Duration.ofSeconds(60);

  /** A chunk's message: 1 MiB of data and a few bytes around it. */
  static final int MAX_REPLY_BYTES = ChunkReader.MAX_CHUNK + 64 * 1024;

  /**
   * What a node may send before this side has taken it: the HTTP/2 window of each stream and of the
   * connection to that node (gRPC gives both the same). gRPC's default, 1 MiB, is one chunk: the
   * node sent a chunk, then waited for the window to come back once this side had checked and
   * written it, and the two sides took turns. Eight chunks keep the node reading and sending while
   * this side writes (measured by hack/bench-restore.sh: a 512 MiB copy in 1.79 and 2.16 s rather
   * than 2.64 and 2.75 s; 4 MiB gave 2.53 s), and bound what waits unread here to 8 MiB for each
   * node copied from, however many copies share its connection.
   */
  static final int WINDOW_BYTES = 8 * ChunkReader.MAX_CHUNK;

  private final Function<String, ManagedChannel> dial;
  private final Duration stall;
  private final Resumes resumes;
  private final Map<String, ManagedChannel> channels = new ConcurrentHashMap<>();
  private final ScheduledExecutorService timer =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "data-copy-watch");
            t.setDaemon(true);
            return t;
          });

  /** A reader that dials endpoints ({@code host:port}) with {@code tls}. */
  public SnapshotReader(DataTls tls) {
    this(endpoint -> dial(endpoint, tls), STALL);
  }

  /** The channel to a node's data port at {@code endpoint} that copies read from. */
  static ManagedChannel dial(String endpoint, DataTls tls) {
    return NettyChannelBuilder.forTarget(endpoint, tls.channelCredentials())
        .maxInboundMessageSize(MAX_REPLY_BYTES)
        .flowControlWindow(WINDOW_BYTES)
        .build();
  }

  SnapshotReader(Function<String, ManagedChannel> dial, Duration stall) {
    this(dial, stall, Resumes.DEFAULT);
  }

  SnapshotReader(Function<String, ManagedChannel> dial, Duration stall, Resumes resumes) {
    this.dial = dial;
    this.stall = stall;
    this.resumes = resumes;
  }

  /**
   * The snapshot as {@code node}, at {@code endpoint}, describes it; empty when it answers that it
   * holds no such snapshot. UNAVAILABLE, naming the node and endpoint, when it cannot be reached.
   */
  public Optional<RemoteSnapshot> describe(String node, String endpoint, String snapshotId) {
    String what = "describing snapshot " + snapshotId;
    return ask(
            node,
            endpoint,
            what,
            stub -> stub.describe(SnapshotRef.newBuilder().setSnapshotId(snapshotId).build()))
        .map(Described::of)
        .map(facts -> copyOf(facts, snapshotId, false, node, endpoint, what));
  }

  /**
   * The volume as {@code node}, at {@code endpoint}, describes it; empty when it answers that it
   * holds no such volume. Its copy streams a point-in-time copy that node takes for the read.
   * UNAVAILABLE, naming the node and endpoint, when it cannot be reached.
   */
  public Optional<RemoteSnapshot> describeVolume(String node, String endpoint, String volumeId) {
    String what = "describing volume " + volumeId;
    return ask(
            node,
            endpoint,
            what,
            stub -> stub.describeVolume(VolumeRef.newBuilder().setVolumeId(volumeId).build()))
        .map(Described::of)
        .map(facts -> copyOf(facts, volumeId, true, node, endpoint, what));
  }

  /** What a node's SnapshotFacts or VolumeFacts say, alike for either. */
  private record Described(
      String node,
      Form form,
      long sizeBytes,
      dev.soko.data.v1.DataProto.AccessType accessType,
      String fsType) {
    static Described of(SnapshotFacts facts) {
      return new Described(
          facts.getNode(),
          facts.getForm(),
          facts.getSizeBytes(),
          facts.getAccessType(),
          facts.getFsType());
    }

    static Described of(VolumeFacts facts) {
      return new Described(
          facts.getNode(),
          facts.getForm(),
          facts.getSizeBytes(),
          facts.getAccessType(),
          facts.getFsType());
    }
  }

  /**
   * The copy of what {@code node} described as {@code facts}: its tree of files where its form is
   * FILE_TREE, its image's ranges otherwise.
   */
  private RemoteSnapshot copyOf(
      Described facts, String id, boolean ofVolume, String node, String endpoint, String what) {
    requireNode(facts.node(), what, node, endpoint);
    StreamSource source =
        new StreamSource(
            channel(endpoint),
            id,
            ofVolume,
            node,
            endpoint,
            facts.sizeBytes(),
            accessType(facts.accessType(), what, node),
            facts.fsType(),
            stall,
            resumes,
            timer);
    if (facts.form() == Form.FORM_FILE_TREE) {
      return new StreamedTree(source);
    }
    return ofVolume ? StreamedSnapshot.volume(source) : StreamedSnapshot.snapshot(source);
  }

  /**
   * One describing call to the node's port, within {@link #DESCRIBE_DEADLINE}: empty when the node
   * answers NOT_FOUND, a StorageException naming the node and endpoint for any other failure.
   */
  private <T> Optional<T> ask(
      String node,
      String endpoint,
      String what,
      Function<SnapshotDataGrpc.SnapshotDataBlockingStub, T> call) {
    try {
      return Optional.of(
          call.apply(
              SnapshotDataGrpc.newBlockingStub(channel(endpoint))
                  .withDeadlineAfter(DESCRIBE_DEADLINE.toMillis(), TimeUnit.MILLISECONDS)));
    } catch (StatusRuntimeException e) {
      if (e.getStatus().getCode() == Status.Code.NOT_FOUND) {
        return Optional.empty();
      }
      throw RemoteFailures.of(e.getStatus(), what, node, endpoint);
    }
  }

  private ManagedChannel channel(String endpoint) {
    return channels.computeIfAbsent(endpoint, dial);
  }

  private static void requireNode(String answered, String what, String node, String endpoint) {
    if (!answered.equals(node)) {
      throw new StorageException(
          StorageException.Reason.UNAVAILABLE,
          what
              + ": the data port at "
              + endpoint
              + " is node "
              + answered
              + "'s, not node "
              + node
              + "'s (an endpoint no longer current)");
    }
  }

  private static AccessType accessType(
      dev.soko.data.v1.DataProto.AccessType type, String what, String node) {
    return switch (type) {
      case BLOCK -> AccessType.BLOCK;
      case MOUNT -> AccessType.FILESYSTEM;
      default ->
          throw new StorageException(
              StorageException.Reason.INTERNAL,
              what + ": node " + node + " gave no known access type (" + type + ")");
    };
  }

  /** Closes every channel (calls still running on them fail) and the copies' watch. */
  @Override
  public void close() {
    channels.values().forEach(ManagedChannel::shutdownNow);
    channels.clear();
    timer.shutdownNow();
  }
}
