package dev.soko.driver.transfer;

import dev.soko.driver.model.GroupSnapshot;
import dev.soko.driver.model.Snapshot;
import dev.soko.driver.state.Ids;
import dev.soko.driver.volume.SpanningGroupId;
import dev.soko.driver.volume.StorageException;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes a group snapshot whose members are on several nodes at one instant: every node freezes its
 * members and answers Frozen; only once all have does any node get Copy; each then copies, thaws
 * and answers Done with its part. Until every node is frozen nothing is copied anywhere, so a node
 * that refuses, fails, or does not answer within {@link #DEADLINE} ends every stream, and each node
 * thaws and drops its uncopied part: nothing is left behind. A part that fails after Copy makes the
 * coordinator remove the parts the others made.
 *
 * <p>Idempotent by name: each node answers an earlier part of the same name with that part's ID
 * instead of freezing. Every node answering one earlier ID is that group, answered again; some
 * nodes with an earlier part and some without (an attempt cut between the nodes' copies) is ABORTED
 * after those parts are removed, so the retry takes the whole group afresh.
 */
public final class GroupCoordinator {
  private static final Logger LOG = LoggerFactory.getLogger(GroupCoordinator.class);

  /** How long every node has to freeze; each node thaws by itself as long after its Freeze. */
  public static final Duration DEADLINE = GroupPartService.DEADLINE;

  /** The copies are reflinks or a pool's sparse copies: bounded, but not by the freeze deadline. */
  static final Duration COPY_WAIT = Duration.ofMinutes(5);

  /** One node's stream, as the coordinator drives it. */
  public interface Part {
    /** Asks the node to freeze its members. */
    void freeze();

    /** The part's group ID once the node is frozen; fails with the node's refusal. */
    CompletableFuture<String> frozen();

    /** Lets the node copy; sent only once every part is frozen. */
    void copy();

    /** The node's part once copied and recorded. */
    CompletableFuture<GroupSnapshot> done();

    /** Ends the stream: a node not yet told to copy thaws and drops its part. */
    void cancel();
  }

  /** Opens a node's stream, ready to send its Freeze. */
  @FunctionalInterface
  public interface Links {
    /**
     * A StorageException (UNAVAILABLE naming the node) when the node cannot be found (gone, no data
     * endpoint); one that cannot be reached fails the part's answers.
     */
    Part open(String node, String name, String groupSnapshotId, List<String> volumeIds);
  }

  /** Removes a part a node kept, as DeleteVolumeGroupSnapshot does on that node. */
  @FunctionalInterface
  public interface Removal {
    void remove(String node, String groupSnapshotId);
  }

  private final Links links;
  private final Removal removal;
  private final Duration deadline;

  public GroupCoordinator(Links links, Removal removal) {
    this(links, removal, DEADLINE);
  }

  GroupCoordinator(Links links, Removal removal, Duration deadline) {
    this.links = links;
    this.removal = removal;
    this.deadline = deadline;
  }

  /**
   * The group {@code name} of the volumes in {@code volumesByNode} (each node's members, in the
   * request's order).
   */
  public GroupSnapshot take(String name, Map<String, List<String>> volumesByNode) {
    SpanningGroupId id =
        new SpanningGroupId(Ids.newGroupId(), List.copyOf(volumesByNode.keySet())).checkLength();
    long until = System.nanoTime() + deadline.toNanos();
    Map<String, Part> parts = new LinkedHashMap<>();
    try {
      volumesByNode.forEach(
          (node, volumes) -> parts.put(node, links.open(node, name, id.id(), volumes)));
      // Every stream open and every endpoint found first: the Freezes go out together, so the
      // nodes freeze as close together as the network lets them.
      parts.values().forEach(Part::freeze);
      Map<String, String> partIds = new HashMap<>();
      for (Map.Entry<String, Part> part : parts.entrySet()) {
        partIds.put(part.getKey(), await(part.getKey(), part.getValue().frozen(), until, "freeze"));
      }
      String agreed = agreed(name, id, partIds, parts);
      // Every node is frozen: the group's instant. Only now may any node copy.
      parts.values().forEach(Part::copy);
      return merged(name, agreed, collect(parts, agreed));
    } catch (RuntimeException e) {
      parts.values().forEach(Part::cancel);
      throw e;
    }
  }

  /**
   * The ID all parts have: the new one, or an earlier attempt's when every node had taken its part.
   * Some nodes with an earlier part and some without: those parts are removed and the call ABORTED.
   */
  private String agreed(
      String name, SpanningGroupId id, Map<String, String> partIds, Map<String, Part> parts) {
    List<String> distinct = partIds.values().stream().distinct().toList();
    if (distinct.size() == 1) {
      return distinct.get(0);
    }
    parts.values().forEach(Part::cancel);
    List<String> earlier = new ArrayList<>();
    partIds.forEach(
        (node, partId) -> {
          if (!partId.equals(id.id())) {
            removal.remove(node, partId);
            earlier.add(node + " (" + partId + ")");
          }
        });
    throw new StorageException(
        StorageException.Reason.ABORTED,
        "group snapshot "
            + name
            + ": an earlier attempt left parts on some nodes only, which were removed: "
            + String.join(", ", earlier)
            + "; a retry takes the whole group");
  }

  /** Every part's Done; a part that failed removes the ones made. */
  private Map<String, GroupSnapshot> collect(Map<String, Part> parts, String groupId) {
    Map<String, GroupSnapshot> done = new LinkedHashMap<>();
    long until = System.nanoTime() + COPY_WAIT.toNanos();
    RuntimeException failure = null;
    for (Map.Entry<String, Part> part : parts.entrySet()) {
      try {
        done.put(part.getKey(), await(part.getKey(), part.getValue().done(), until, "copy"));
      } catch (RuntimeException e) {
        failure = failure == null ? e : failure;
      }
    }
    if (failure != null) {
      // A node that did not answer may still have made its part: remove every one.
      parts.keySet().forEach(node -> removeQuietly(node, groupId));
      throw failure;
    }
    return done;
  }

  private void removeQuietly(String node, String groupId) {
    try {
      removal.remove(node, groupId);
    } catch (RuntimeException e) {
      LOG.error(
          "cannot remove the part of failed group snapshot {} on node {}: {}; delete the group"
              + " snapshot by that ID to remove it",
          groupId,
          node,
          e.getMessage());
    }
  }

  /**
   * The part's answer by {@code untilNanos}: the node's refusal keeps its code, naming the node; no
   * answer in time, or a node not reached, is UNAVAILABLE naming it.
   */
  private static <T> T await(
      String node, CompletableFuture<T> answer, long untilNanos, String step) {
    try {
      return answer.get(Math.max(0, untilNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      throw new StorageException(
          StorageException.Reason.UNAVAILABLE,
          "node " + node + " did not answer the group's " + step + " in time: is its driver up?");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StorageException(StorageException.Reason.ABORTED, "interrupted");
    } catch (ExecutionException e) {
      throw refusal(node, step, e.getCause());
    }
  }

  private static StorageException refusal(String node, String step, Throwable cause) {
    if (cause instanceof StorageException storage) {
      return storage;
    }
    Status status =
        cause instanceof StatusRuntimeException r
            ? r.getStatus()
            : cause instanceof StatusException s ? s.getStatus() : Status.fromThrowable(cause);
    String detail = status.getDescription() == null ? "" : ": " + status.getDescription();
    StorageException.Reason reason =
        switch (status.getCode()) {
          case INVALID_ARGUMENT -> StorageException.Reason.INVALID_ARGUMENT;
          case NOT_FOUND -> StorageException.Reason.NOT_FOUND;
          case ALREADY_EXISTS -> StorageException.Reason.ALREADY_EXISTS;
          case FAILED_PRECONDITION -> StorageException.Reason.FAILED_PRECONDITION;
          case RESOURCE_EXHAUSTED -> StorageException.Reason.RESOURCE_EXHAUSTED;
          case OUT_OF_RANGE -> StorageException.Reason.OUT_OF_RANGE;
          case ABORTED -> StorageException.Reason.ABORTED;
          case INTERNAL -> StorageException.Reason.INTERNAL;
          default -> StorageException.Reason.UNAVAILABLE;
        };
    String why =
        reason == StorageException.Reason.UNAVAILABLE
            ? "node "
                + node
                + " was not reached for the group's "
                + step
                + " ("
                + status.getCode()
                + detail
                + ")"
            : "node " + node + " refused the group's " + step + detail;
    return new StorageException(reason, why);
  }

  /** The whole group: every node's members, the latest of the parts' creation times. */
  private static GroupSnapshot merged(String name, String id, Map<String, GroupSnapshot> parts) {
    List<Snapshot> members = new ArrayList<>();
    parts.values().forEach(part -> members.addAll(part.members()));
    Instant created =
        parts.values().stream()
            .map(GroupSnapshot::createdAt)
            .max(Comparator.naturalOrder())
            .orElseThrow();
    LOG.info("group snapshot {} across nodes {}: {} members", id, parts.keySet(), members.size());
    return new GroupSnapshot(id, name, members, created);
  }
}
