package dev.soko.driver.transfer;

import dev.soko.data.v1.GroupPartsGrpc;
import dev.soko.data.v1.GroupsProto.Done;
import dev.soko.data.v1.GroupsProto.Freeze;
import dev.soko.data.v1.GroupsProto.Frozen;
import dev.soko.data.v1.GroupsProto.Member;
import dev.soko.data.v1.GroupsProto.PartAnswer;
import dev.soko.data.v1.GroupsProto.PartStep;
import dev.soko.driver.model.GroupSnapshot;
import dev.soko.driver.server.StatusMapper;
import dev.soko.driver.volume.GroupParts;
import dev.soko.driver.volume.SpanningGroupId;
import dev.soko.driver.volume.StorageException;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This node's side of a group snapshot across nodes: one stream per part. The part runs on a thread
 * of its own, which freezes the members, answers Frozen, and holds the freeze only until Copy
 * arrives: the stream is the lease, so a stream cut (the controller gone) or no Copy within {@link
 * #DEADLINE} of the Freeze thaws the members at once and drops the part, and no filesystem stays
 * frozen behind a controller that died.
 */
public final class GroupPartService extends GroupPartsGrpc.GroupPartsImplBase {
  private static final Logger LOG = LoggerFactory.getLogger(GroupPartService.class);

  /** How long a part stays frozen waiting for Copy: the group's deadline. */
  public static final Duration DEADLINE = Duration.ofSeconds(10);

  /** Only the controller-mode driver takes groups. */
  static final Map<String, Set<String>> ROLES_BY_METHOD =
      Map.of(GroupPartsGrpc.getTakeMethod().getFullMethodName(), Set.of(Roles.CONTROLLER));

  private final GroupParts parts;
  private final Duration deadline;

  public GroupPartService(GroupParts parts) {
    this(parts, DEADLINE);
  }

  GroupPartService(GroupParts parts, Duration deadline) {
    this.parts = parts;
    this.deadline = deadline;
  }

  @Override
  public StreamObserver<PartStep> take(StreamObserver<PartAnswer> answers) {
    return new Part(answers);
  }

  /** One part: its steps arrive on gRPC's threads, its work runs on its own. */
  private final class Part implements StreamObserver<PartStep> {
    private final StreamObserver<PartAnswer> answers;
    private final AtomicBoolean started = new AtomicBoolean();

    /** True once Copy arrived; false when the stream ended or was cut first. */
    private final CompletableFuture<Boolean> copy = new CompletableFuture<>();

    Part(StreamObserver<PartAnswer> answers) {
      this.answers = answers;
    }

    @Override
    public void onNext(PartStep step) {
      switch (step.getStepCase()) {
        case FREEZE -> {
          if (started.compareAndSet(false, true)) {
            Freeze freeze = step.getFreeze();
            Thread part =
                new Thread(
                    () -> run(freeze, System.nanoTime() + deadline.toNanos()),
                    "group-part-" + freeze.getName());
            part.setDaemon(true);
            part.start();
          }
        }
        case COPY -> copy.complete(true);
        default -> copy.complete(false);
      }
    }

    @Override
    public void onError(Throwable cut) {
      copy.complete(false);
    }

    @Override
    public void onCompleted() {
      copy.complete(false);
    }

    private void run(Freeze freeze, long deadlineNanos) {
      AtomicBoolean asked = new AtomicBoolean();
      try {
        SpanningGroupId id = spanning(freeze.getGroupSnapshotId());
        GroupSnapshot part =
            parts.takeGroupPart(
                freeze.getName(),
                id,
                freeze.getVolumeIdsList(),
                () -> {
                  asked.set(true);
                  return send(frozen(id.id())) && copyBy(deadlineNanos);
                });
        if (!asked.get()) {
          // Taken before, by an earlier attempt of the same group: nothing to freeze. It stays
          // whatever this stream does; the coordinator decides from its ID.
          if (!send(frozen(part.id())) || !copyBy(deadlineNanos)) {
            fail(Status.ABORTED.withDescription("no Copy came; the part taken before is kept"));
            return;
          }
        }
        if (send(PartAnswer.newBuilder().setDone(done(part)).build())) {
          answers.onCompleted();
        }
      } catch (RuntimeException e) {
        LOG.atWarn()
            .addKeyValue("group", freeze.getGroupSnapshotId())
            .log("group part {} not taken: {}", freeze.getName(), e.getMessage());
        fail(StatusMapper.toStatus(e));
      }
    }

    /** False when the stream is gone (the controller cancelled it or went away). */
    private boolean send(PartAnswer answer) {
      try {
        answers.onNext(answer);
        return true;
      } catch (RuntimeException gone) {
        return false;
      }
    }

    private void fail(Status status) {
      try {
        answers.onError(status.asException());
      } catch (RuntimeException gone) {
        // the stream is gone already; nothing waits for the answer
      }
    }

    /** Waits for Copy until the deadline; false when the stream ends or the time is up. */
    private boolean copyBy(long deadlineNanos) {
      try {
        return copy.get(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (TimeoutException e) {
        return false;
      } catch (ExecutionException e) {
        return false;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
  }

  private static PartAnswer frozen(String groupId) {
    return PartAnswer.newBuilder()
        .setFrozen(Frozen.newBuilder().setGroupSnapshotId(groupId))
        .build();
  }

  private static SpanningGroupId spanning(String id) {
    return SpanningGroupId.tryParse(id)
        .orElseThrow(
            () ->
                StorageException.invalid(
                    "%s is not the ID of a group snapshot across nodes", printable(id)));
  }

  private static String printable(String id) {
    String cut = id.length() > 160 ? id.substring(0, 160) + "..." : id;
    return cut.replaceAll("\\p{Cntrl}", "?");
  }

  static Done done(GroupSnapshot part) {
    Done.Builder done =
        Done.newBuilder()
            .setGroupSnapshotId(part.id())
            .setCreationSeconds(part.createdAt().getEpochSecond())
            .setCreationNanos(part.createdAt().getNano());
    part.members()
        .forEach(
            m ->
                done.addMembers(
                    Member.newBuilder()
                        .setSnapshotId(m.id())
                        .setSourceVolumeId(m.sourceVolumeId())
                        .setSizeBytes(m.sizeBytes())
                        .setReadyToUse(m.readyToUse())));
    return done.build();
  }
}
