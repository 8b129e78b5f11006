package dev.soko.driver.transfer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.soko.driver.model.GroupSnapshot;
import dev.soko.driver.model.Snapshot;
import dev.soko.driver.volume.SpanningGroupId;
import dev.soko.driver.volume.StorageException;
import dev.soko.driver.volume.StorageException.Reason;
import io.grpc.Status;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The coordination of a group across nodes, over parts whose answers the test gives. */
class GroupCoordinatorTest {
  private final List<String> events = Collections.synchronizedList(new ArrayList<>());
  private final List<String> removed = Collections.synchronizedList(new ArrayList<>());
  private final Map<String, FakePart> parts = new LinkedHashMap<>();
  private final ScheduledExecutorService later = Executors.newSingleThreadScheduledExecutor();

  @AfterEach
  void stop() {
    later.shutdownNow();
  }

  /** A node's part: Frozen as {@code onFreeze} says, Done as soon as it is told to copy. */
  private final class FakePart implements GroupCoordinator.Part {
    final String node;
    final CompletableFuture<String> frozen = new CompletableFuture<>();
    final CompletableFuture<GroupSnapshot> done = new CompletableFuture<>();
    String groupId;
    boolean failCopy;

    FakePart(String node) {
      this.node = node;
    }

    Runnable onFreeze = () -> {};

    @Override
    public void freeze() {
      events.add("freeze " + node);
      onFreeze.run();
    }

    @Override
    public CompletableFuture<String> frozen() {
      return frozen;
    }

    @Override
    public void copy() {
      events.add("copy " + node);
      if (failCopy) {
        done.completeExceptionally(Status.INTERNAL.withDescription("cp failed").asException());
        return;
      }
      done.complete(
          new GroupSnapshot(
              groupId,
              "",
              List.of(
                  new Snapshot("snap-" + node, "", "vol-" + node, 1, Instant.EPOCH, true, groupId)),
              Instant.EPOCH));
    }

    @Override
    public CompletableFuture<GroupSnapshot> done() {
      return done;
    }

    @Override
    public void cancel() {
      events.add("cancel " + node);
    }

    void freezeAfter(long millis, String partId) {
      later.schedule(
          () -> {
            events.add("frozen " + node);
            frozen.complete(partId);
          },
          millis,
          TimeUnit.MILLISECONDS);
    }
  }

  private GroupCoordinator coordinator(Consumer<FakePart> onOpen, Duration deadline) {
    return new GroupCoordinator(
        (node, name, groupId, volumes) -> {
          FakePart part = new FakePart(node);
          part.groupId = groupId;
          parts.put(node, part);
          events.add("open " + node + " " + volumes);
          part.onFreeze = () -> onOpen.accept(part);
          return part;
        },
        (node, groupId) -> removed.add(node + " " + groupId),
        deadline);
  }

  private static Map<String, List<String>> twoNodes() {
    Map<String, List<String>> byNode = new LinkedHashMap<>();
    byNode.put("node-a", List.of("vol-1", "vol-2"));
    byNode.put("node-b", List.of("vol-3"));
    return byNode;
  }

  @Test
  void noNodeCopiesBeforeEveryNodeIsFrozen() {
    GroupSnapshot group =
        coordinator(
                part -> part.freezeAfter(part.node.equals("node-a") ? 0 : 300, part.groupId),
                Duration.ofSeconds(5))
            .take("g", twoNodes());

    assertThat(events)
        .containsExactlyInAnyOrder(
            "open node-a [vol-1, vol-2]",
            "open node-b [vol-3]",
            "freeze node-a",
            "freeze node-b",
            "frozen node-a",
            "frozen node-b",
            "copy node-a",
            "copy node-b");
    assertThat(events.indexOf("open node-b [vol-3]"))
        .as("every stream is open before any Freeze goes out")
        .isLessThan(events.indexOf("freeze node-a"));
    assertThat(Math.max(events.indexOf("frozen node-a"), events.indexOf("frozen node-b")))
        .as("no node copies before every node is frozen: %s", events)
        .isLessThan(Math.min(events.indexOf("copy node-a"), events.indexOf("copy node-b")));
    assertThat(SpanningGroupId.tryParse(group.id()).orElseThrow().nodes())
        .containsExactly("node-a", "node-b");
    assertThat(group.members())
        .extracting(Snapshot::id)
        .containsExactly("snap-node-a", "snap-node-b");
    assertThat(removed).isEmpty();
  }

  @Test
  void aNodeThatRefusesEndsEveryStreamBeforeAnyCopyWithItsOwnCode() {
    GroupCoordinator coordinator =
        coordinator(
            part -> {
              if (part.node.equals("node-b")) {
                part.frozen.completeExceptionally(
                    Status.FAILED_PRECONDITION
                        .withDescription("volume vol-3: it is a raw block volume in use")
                        .asException());
              } else {
                part.freezeAfter(0, part.groupId);
              }
            },
            Duration.ofSeconds(5));

    assertThatThrownBy(() -> coordinator.take("g", twoNodes()))
        .isInstanceOfSatisfying(
            StorageException.class,
            e -> assertThat(e.reason()).isEqualTo(Reason.FAILED_PRECONDITION))
        .hasMessageContaining("node node-b refused")
        .hasMessageContaining("raw block volume in use");
    assertThat(events).noneMatch(e -> e.startsWith("copy"));
    assertThat(events).contains("cancel node-a", "cancel node-b");
  }

  @Test
  void aNodeThatDoesNotAnswerWithinTheDeadlineIsUnavailableAndNothingIsCopied() {
    GroupCoordinator coordinator =
        coordinator(
            part -> {
              if (part.node.equals("node-a")) {
                part.freezeAfter(0, part.groupId);
              }
            },
            Duration.ofMillis(300));

    long start = System.nanoTime();
    assertThatThrownBy(() -> coordinator.take("g", twoNodes()))
        .isInstanceOfSatisfying(
            StorageException.class, e -> assertThat(e.reason()).isEqualTo(Reason.UNAVAILABLE))
        .hasMessageContaining("node node-b did not answer");
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
    assertThat(events).noneMatch(e -> e.startsWith("copy"));
    assertThat(events).contains("cancel node-a", "cancel node-b");
  }

  @Test
  void aNodeNotReachedIsUnavailableNamingItAndTheOthersAreCancelled() {
    GroupCoordinator coordinator =
        new GroupCoordinator(
            (node, name, groupId, volumes) -> {
              if (node.equals("node-b")) {
                throw new StorageException(Reason.UNAVAILABLE, "node node-b is gone");
              }
              FakePart part = new FakePart(node);
              part.onFreeze = () -> part.freezeAfter(0, groupId);
              parts.put(node, part);
              return part;
            },
            (node, groupId) -> removed.add(node),
            Duration.ofSeconds(5));
    assertThatThrownBy(() -> coordinator.take("g", twoNodes())).hasMessage("node node-b is gone");
    assertThat(events)
        .as("a node not found is known before any node is asked to freeze")
        .contains("cancel node-a")
        .noneMatch(e -> e.startsWith("freeze") || e.startsWith("copy"));
  }

  @Test
  void aRetryThatEveryNodeAnswersWithItsEarlierPartIsThatGroup() {
    String earlier = "group-aaaaaaaaaaaaaaaaaaaa@node-a+node-b";
    GroupSnapshot group =
        coordinator(part -> part.freezeAfter(0, earlier), Duration.ofSeconds(5))
            .take("g", twoNodes());
    // The fake's Done names the ID it was opened with; the answer is the ID the nodes agreed on.
    assertThat(group.id()).isEqualTo(earlier);
    assertThat(removed).isEmpty();
  }

  @Test
  void aRetryThatFindsAnEarlierPartOnOneNodeOnlyRemovesItAndTakesNothing() {
    String earlier = "group-aaaaaaaaaaaaaaaaaaaa@node-a+node-b";
    GroupCoordinator coordinator =
        coordinator(
            part -> part.freezeAfter(0, part.node.equals("node-a") ? earlier : part.groupId),
            Duration.ofSeconds(5));
    assertThatThrownBy(() -> coordinator.take("g", twoNodes()))
        .isInstanceOfSatisfying(
            StorageException.class, e -> assertThat(e.reason()).isEqualTo(Reason.ABORTED));
    assertThat(removed).containsExactly("node-a " + earlier);
    assertThat(events).noneMatch(e -> e.startsWith("copy"));
    assertThat(events).contains("cancel node-a", "cancel node-b");
  }

  @Test
  void aCopyThatFailsRemovesEveryPart() {
    GroupCoordinator coordinator =
        coordinator(
            part -> {
              part.failCopy = part.node.equals("node-b");
              part.freezeAfter(0, part.groupId);
            },
            Duration.ofSeconds(5));
    assertThatThrownBy(() -> coordinator.take("g", twoNodes()))
        .isInstanceOfSatisfying(
            StorageException.class, e -> assertThat(e.reason()).isEqualTo(Reason.INTERNAL))
        .hasMessageContaining("node node-b");
    String id = parts.get("node-a").groupId;
    assertThat(removed).containsExactly("node-a " + id, "node-b " + id);
  }
}
