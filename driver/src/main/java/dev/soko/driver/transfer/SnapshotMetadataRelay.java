package dev.soko.driver.transfer;

import csi.v1.Csi;
import csi.v1.SnapshotMetadataGrpc;
import dev.soko.driver.report.SnapshotHomes.Home;
import dev.soko.driver.server.StatusMapper;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

/**
 * The controller's CSI SnapshotMetadata service: the sidecar talks to the controller only, while a
 * snapshot's blocks are on one node. Each call is forwarded to the data port of the node that holds
 * the snapshot (the target's node for a delta), with the controller's certificate, and the node's
 * answers stream back as they come: the next message is asked of the node only when the client can
 * take one, so a slow client holds about one message here and stops the node's reads. The node's
 * failures come back with their code; a client that cancels cancels the node's call.
 */
public final class SnapshotMetadataRelay extends SnapshotMetadataGrpc.SnapshotMetadataImplBase
    implements AutoCloseable {
  /** Where a snapshot lives; empty when no content of this driver names it. */
  @FunctionalInterface
  public interface Homes {
    Optional<Home> of(String snapshotId);
  }

  /** A node's answer is at most 4096 ranges of about 24 bytes; far below this. */
  static final int MAX_REPLY_BYTES = 1 << 20;

  private final Homes homes;
  private final Function<String, ManagedChannel> dial;
  private final Map<String, ManagedChannel> channels = new ConcurrentHashMap<>();

  /** A relay that dials nodes' data endpoints ({@code host:port}) with {@code tls}. */
  public SnapshotMetadataRelay(Homes homes, DataTls tls) {
    this(
        homes,
        endpoint ->
            NettyChannelBuilder.forTarget(endpoint, tls.channelCredentials())
                .maxInboundMessageSize(MAX_REPLY_BYTES)
                .build());
  }

  SnapshotMetadataRelay(Homes homes, Function<String, ManagedChannel> dial) {
    this.homes = homes;
    this.dial = dial;
  }

  @Override
  public void getMetadataAllocated(
      Csi.GetMetadataAllocatedRequest request,
      StreamObserver<Csi.GetMetadataAllocatedResponse> observer) {
    try {
      Home home = homeOf(request.getSnapshotId(), "snapshot_id");
      forward(SnapshotMetadataGrpc.getGetMetadataAllocatedMethod(), request, home, observer);
    } catch (RuntimeException e) {
      observer.onError(StatusMapper.toStatus(e).asRuntimeException());
    }
  }

  @Override
  public void getMetadataDelta(
      Csi.GetMetadataDeltaRequest request, StreamObserver<Csi.GetMetadataDeltaResponse> observer) {
    try {
      Home target = homeOf(request.getTargetSnapshotId(), "target_snapshot_id");
      String base = request.getBaseSnapshotId();
      if (base.isEmpty()) {
        throw invalid("base_snapshot_id is required");
      }
      // A base no content names is left to the target's node, which answers for its own catalog.
      Optional<Home> baseHome = homes.of(base);
      if (baseHome.isPresent() && !baseHome.get().node().equals(target.node())) {
        throw invalid(
            "base snapshot "
                + base
                + " is on node "
                + baseHome.get().node()
                + " and target snapshot "
                + request.getTargetSnapshotId()
                + " on node "
                + target.node()
                + ": snapshots of one volume are on one node, so they are not of one volume");
      }
      forward(SnapshotMetadataGrpc.getGetMetadataDeltaMethod(), request, target, observer);
    } catch (RuntimeException e) {
      observer.onError(StatusMapper.toStatus(e).asRuntimeException());
    }
  }

  private Home homeOf(String snapshotId, String field) {
    if (snapshotId.isEmpty()) {
      throw invalid(field + " is required");
    }
    return homes
        .of(snapshotId)
        .orElseThrow(
            () ->
                Status.NOT_FOUND
                    .withDescription(
                        "snapshot " + snapshotId + " is not known: no snapshot content names it")
                    .asRuntimeException());
  }

  private <Q, R> void forward(
      MethodDescriptor<Q, R> method, Q request, Home home, StreamObserver<R> observer) {
    ServerCallStreamObserver<R> client = (ServerCallStreamObserver<R>) observer;
    ClientCall<Q, R> upstream =
        channels.computeIfAbsent(home.endpoint(), dial).newCall(method, CallOptions.DEFAULT);
    Pacing<R> pacing = new Pacing<>(client, upstream, home);
    client.setOnCancelHandler(pacing::cancel);
    client.setOnReadyHandler(pacing::clientReady);
    upstream.start(pacing, new Metadata());
    upstream.sendMessage(request);
    upstream.halfClose();
    upstream.request(1);
  }

  /**
   * Asks the node for one message at a time: after each, the next only when the client is ready
   * (now, or at its next ready callback). {@code waiting} hands the request from the node's
   * callback thread to the client's, so exactly one of them asks.
   */
  private static final class Pacing<R> extends ClientCall.Listener<R> {
    private final ServerCallStreamObserver<R> client;
    private final ClientCall<?, R> upstream;
    private final Home home;
    private final AtomicBoolean waiting = new AtomicBoolean();
    private volatile boolean cancelled;

    Pacing(ServerCallStreamObserver<R> client, ClientCall<?, R> upstream, Home home) {
      this.client = client;
      this.upstream = upstream;
      this.home = home;
    }

    @Override
    public void onMessage(R message) {
      if (cancelled) {
        return;
      }
      client.onNext(message);
      if (client.isReady()) {
        upstream.request(1);
        return;
      }
      waiting.set(true);
      // The client may have become ready between the check and the flag: its callback then
      // found nothing to do, so ask here.
      if (client.isReady() && waiting.compareAndSet(true, false)) {
        upstream.request(1);
      }
    }

    void clientReady() {
      if (waiting.compareAndSet(true, false)) {
        upstream.request(1);
      }
    }

    @Override
    public void onClose(Status status, Metadata trailers) {
      if (cancelled) {
        return;
      }
      if (status.isOk()) {
        client.onCompleted();
      } else {
        client.onError(relayed(status).asRuntimeException());
      }
    }

    /** The node's own answers keep their code; a node not reached is named. */
    private Status relayed(Status status) {
      if (status.getCode() == Status.Code.UNAVAILABLE
          || status.getCode() == Status.Code.DEADLINE_EXCEEDED) {
        return Status.UNAVAILABLE
            .withDescription(
                "node "
                    + home.node()
                    + " (data port "
                    + home.endpoint()
                    + ") did not answer: "
                    + status.getCode()
                    + (status.getDescription() == null ? "" : ": " + status.getDescription()))
            .withCause(status.getCause());
      }
      return status;
    }

    void cancel() {
      cancelled = true;
      upstream.cancel("the client cancelled the call", null);
    }
  }

  private static RuntimeException invalid(String message) {
    return Status.INVALID_ARGUMENT.withDescription(message).asRuntimeException();
  }

  /** Closes every channel to the nodes; calls still running on them fail. */
  @Override
  public void close() {
    channels.values().forEach(ManagedChannel::shutdownNow);
    channels.clear();
  }
}
