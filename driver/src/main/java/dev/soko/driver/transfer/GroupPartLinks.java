package dev.soko.driver.transfer;

import dev.soko.data.v1.GroupPartsGrpc;
import dev.soko.data.v1.GroupsProto.Copy;
import dev.soko.data.v1.GroupsProto.Done;
import dev.soko.data.v1.GroupsProto.Freeze;
import dev.soko.data.v1.GroupsProto.PartAnswer;
import dev.soko.data.v1.GroupsProto.PartStep;
import dev.soko.driver.model.GroupSnapshot;
import dev.soko.driver.model.Snapshot;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.UnaryOperator;

/**
 * The controller's streams to the nodes' data ports for {@link GroupCoordinator}, with the
 * controller's certificate (CN soko-controller, the only role the node lets take groups).
 */
public final class GroupPartLinks implements GroupCoordinator.Links, AutoCloseable {
  private final UnaryOperator<String> endpoints;
  private final Function<String, ManagedChannel> dial;
  private final Map<String, ManagedChannel> channels = new ConcurrentHashMap<>();

  /**
   * @param endpoints a node's data endpoint ({@code host:port}), or a StorageException UNAVAILABLE
   *     naming it
   */
  public GroupPartLinks(UnaryOperator<String> endpoints, DataTls tls) {
    this(
        endpoints,
        endpoint -> NettyChannelBuilder.forTarget(endpoint, tls.channelCredentials()).build());
  }

  GroupPartLinks(UnaryOperator<String> endpoints, Function<String, ManagedChannel> dial) {
    this.endpoints = endpoints;
    this.dial = dial;
  }

  @Override
  public GroupCoordinator.Part open(
      String node, String name, String groupSnapshotId, List<String> volumeIds) {
    ManagedChannel channel = channels.computeIfAbsent(endpoints.apply(node), dial);
    Link link = new Link();
    link.steps =
        GroupPartsGrpc.newStub(channel)
            .withDeadlineAfter(
                (GroupCoordinator.DEADLINE.plus(GroupCoordinator.COPY_WAIT)).toMillis(),
                TimeUnit.MILLISECONDS)
            .take(link);
    link.freeze =
        PartStep.newBuilder()
            .setFreeze(
                Freeze.newBuilder()
                    .setName(name)
                    .setGroupSnapshotId(groupSnapshotId)
                    .addAllVolumeIds(volumeIds))
            .build();
    return link;
  }

  /** One stream: the node's answers complete the futures the coordinator waits on. */
  private static final class Link implements GroupCoordinator.Part, StreamObserver<PartAnswer> {
    private final CompletableFuture<String> frozen = new CompletableFuture<>();
    private final CompletableFuture<GroupSnapshot> done = new CompletableFuture<>();
    private StreamObserver<PartStep> steps;
    private PartStep freeze;

    @Override
    public void freeze() {
      steps.onNext(freeze);
    }

    @Override
    public CompletableFuture<String> frozen() {
      return frozen;
    }

    @Override
    public CompletableFuture<GroupSnapshot> done() {
      return done;
    }

    @Override
    public void copy() {
      steps.onNext(PartStep.newBuilder().setCopy(Copy.getDefaultInstance()).build());
      steps.onCompleted();
    }

    @Override
    public void cancel() {
      if (!done.isDone()) {
        steps.onError(
            Status.CANCELLED.withDescription("the group snapshot is not taken").asException());
      }
    }

    @Override
    public void onNext(PartAnswer answer) {
      switch (answer.getAnswerCase()) {
        case FROZEN -> frozen.complete(answer.getFrozen().getGroupSnapshotId());
        case DONE -> done.complete(part(answer.getDone()));
        default -> {
          // an answer this driver does not know: ignored, the stream's end decides
        }
      }
    }

    @Override
    public void onError(Throwable failure) {
      frozen.completeExceptionally(failure);
      done.completeExceptionally(failure);
    }

    @Override
    public void onCompleted() {
      Throwable ended =
          Status.INTERNAL
              .withDescription("the node ended the stream without its part")
              .asException();
      frozen.completeExceptionally(ended);
      done.completeExceptionally(ended);
    }
  }

  private static GroupSnapshot part(Done done) {
    Instant created = Instant.ofEpochSecond(done.getCreationSeconds(), done.getCreationNanos());
    List<Snapshot> members =
        done.getMembersList().stream()
            .map(
                m ->
                    new Snapshot(
                        m.getSnapshotId(),
                        "",
                        m.getSourceVolumeId(),
                        m.getSizeBytes(),
                        created,
                        m.getReadyToUse(),
                        done.getGroupSnapshotId()))
            .toList();
    return new GroupSnapshot(done.getGroupSnapshotId(), "", members, created);
  }

  /** Closes every channel; streams still open fail, and their nodes thaw. */
  @Override
  public void close() {
    channels.values().forEach(ManagedChannel::shutdownNow);
    channels.clear();
  }
}
