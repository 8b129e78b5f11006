package dev.soko.driver.handoff;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.soko.driver.testing.FakeVolumeManager;
import dev.soko.driver.testing.NodePluginApiServer;
import dev.soko.driver.volume.ExpandResult;
import dev.soko.driver.volume.StorageException;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * ControllerExpandVolume handed to the volume's node ({@link RemoteExpand}) against a real
 * kube-apiserver, each side under its own ServiceAccount: the node's answer, the kubelet's path
 * where the node cannot finish (it may not grow the mounted filesystem, its driver is down, it does
 * not know the operation), refusals, a node that is gone, and a controller restarted mid-request.
 */
class RemoteExpandIT extends HandoffCluster {
  static final AtomicInteger NODES = new AtomicInteger();
  static final long GIB = 1L << 30;
  static final Duration SHORT = Duration.ofSeconds(1);
  static final Duration LONG = Duration.ofSeconds(20);

  final String node = "grow-node-" + NODES.incrementAndGet();
  final FakeVolumeManager engine = new FakeVolumeManager();
  final List<String> handled = Collections.synchronizedList(new ArrayList<>());

  /** The Node object of this test's node, as a running cluster has it. */
  void nodeExists() {
    admin
        .nodes()
        .resource(new NodeBuilder().withNewMetadata().withName(node).endMetadata().build())
        .create();
  }

  /** A PV of this driver on this test's node, once the controller has seen it. */
  void volume(String id) {
    volumeOn(node, id);
  }

  /** This test's node carrying out its requests with {@code handler}. */
  void nodeRuns(NodeRequestHandler handler) {
    NodeRequestWatch watch =
        new NodeRequestWatch(
            nodeApi,
            NodePluginApiServer.NAMESPACE,
            node,
            request -> {
              handled.add(request.name() + "@" + request.generation());
              return handler.handle(request);
            },
            Duration.ofSeconds(5),
            SHORT);
    running.add(watch);
    watch.start();
  }

  RemoteExpand controller(Duration wait) {
    return new RemoteExpand(
        owners,
        new NodeRequestClient(controllerApi, NodePluginApiServer.NAMESPACE, wait),
        RemoteExpand.Nodes.of(controllerApi));
  }

  Optional<GenericKubernetesResource> stored(String volumeId) {
    return Optional.ofNullable(
        admin
            .genericKubernetesResources("soko.dev/v1alpha1", "NodeRequest")
            .inNamespace(NodePluginApiServer.NAMESPACE)
            .withName(NodeRequests.name(RemoteExpand.OPERATION, volumeId))
            .get());
  }

  @Test
  void theNodeGrowsTheVolumeAndTheKubeletHasNothingLeftToDo() throws Exception {
    nodeExists();
    volume("vol-grow");
    nodeRuns(new LocalRequests(engine));

    for (int call = 0; call < 2; call++) {
      assertThat(controller(LONG).expand("vol-grow", 2 * GIB, 0))
          .contains(new ExpandResult(2 * GIB, false));
    }

    assertThat(engine.lastExpand).containsExactly(2 * GIB, 0);
    assertThat(handled).as("the repeated call found the answer").hasSize(1);
    GenericKubernetesResource request = stored("vol-grow").orElseThrow();
    assertThat(request.getAdditionalProperties().get("spec"))
        .asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.MAP)
        .containsEntry("operation", "ExpandVolume")
        .containsEntry(
            "parameters", Map.of("requiredBytes", Long.toString(2 * GIB), "limitBytes", "0"));
    assertThat(request.getAdditionalProperties().get("status"))
        .asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.MAP)
        .containsEntry(
            "expansion", Map.of("capacityBytes", 2 * GIB, "nodeExpansionRequired", false));
  }

  @Test
  void concurrentCallsForOneGrowthShareOneRequestAndOneAnswer() throws Exception {
    nodeExists();
    volume("vol-concurrent");
    LocalRequests local = new LocalRequests(engine);
    nodeRuns(
        request -> {
          sleep(500); // both calls are waiting by then
          return local.handle(request);
        });
    List<java.util.concurrent.Future<Optional<ExpandResult>>> calls = new ArrayList<>();
    java.util.concurrent.ExecutorService pool =
        java.util.concurrent.Executors.newFixedThreadPool(3);
    try {
      for (int i = 0; i < 3; i++) {
        calls.add(pool.submit(() -> controller(LONG).expand("vol-concurrent", 2 * GIB, 0)));
      }
      for (var call : calls) {
        assertThat(call.get()).contains(new ExpandResult(2 * GIB, false));
      }
    } finally {
      pool.shutdownNow();
    }

    assertThat(handled).as("one request, one generation, carried out once").hasSize(1);
    assertThat(stored("vol-concurrent").orElseThrow().getMetadata().getGeneration()).isEqualTo(1);
  }

  @Test
  void aFilesystemTheNodeMayNotGrowMountedIsLeftToTheKubelet() throws Exception {
    nodeExists();
    volume("vol-ext4");
    engine.expandNowLeavesNodeWork = true; // as the kernel answers root without CAP_SYS_RESOURCE
    nodeRuns(new LocalRequests(engine));

    assertThat(controller(LONG).expand("vol-ext4", 2 * GIB, 0))
        .contains(new ExpandResult(2 * GIB, true));
  }

  @Test
  void whileTheNodesDriverIsDownTheKubeletsPathAnswersAndTheNodeGrowsItOnceBack() throws Exception {
    nodeExists();
    volume("vol-down");

    assertThat(controller(SHORT).expand("vol-down", 2 * GIB, 0)).as("the kubelet's path").isEmpty();

    nodeRuns(new LocalRequests(engine));
    await("the node grows what was asked while it was down", () -> engine.lastExpand != null);
    assertThat(controller(LONG).expand("vol-down", 2 * GIB, 0))
        .contains(new ExpandResult(2 * GIB, false));
    assertThat(handled).hasSize(1);
  }

  @Test
  void aVolumeWhoseNodeIsGoneIsUnavailableAndGrowsOnceTheNodeIsBack() throws Exception {
    volume("vol-gone");

    StorageException gone =
        catchThrowableOfType(
            StorageException.class, () -> controller(SHORT).expand("vol-gone", 2 * GIB, 0));
    assertThat(gone.reason()).isEqualTo(StorageException.Reason.UNAVAILABLE);
    assertThat(gone.getMessage())
        .isEqualTo(
            "volume vol-gone is on node "
                + node
                + ", which does not exist now; it grows once the node is back");

    nodeExists();
    nodeRuns(new LocalRequests(engine));
    assertThat(controller(LONG).expand("vol-gone", 2 * GIB, 0))
        .contains(new ExpandResult(2 * GIB, false));
  }

  @Test
  void aControllerRestartedMidRequestFindsTheNodesAnswerWithoutANewGeneration() throws Exception {
    nodeExists();
    volume("vol-restart");
    LocalRequests local = new LocalRequests(engine);
    AtomicInteger calls = new AtomicInteger();
    nodeRuns(
        request -> {
          calls.incrementAndGet();
          sleep(1500); // the first controller is gone before the node answers
          return local.handle(request);
        });

    controller(Duration.ofMillis(200)).expand("vol-restart", 2 * GIB, 0);

    // A new process: nothing of the first is kept.
    assertThat(controller(LONG).expand("vol-restart", 2 * GIB, 0))
        .contains(new ExpandResult(2 * GIB, false));
    assertThat(calls).hasValue(1);
    assertThat(stored("vol-restart").orElseThrow().getMetadata().getGeneration()).isEqualTo(1);
  }

  @Test
  void aPoolWithoutTheRoomIsOutOfRangeAndTheRetryIsJudgedAfresh() throws Exception {
    nodeExists();
    volume("vol-full");
    engine.nextFailure =
        StorageException.outOfRange(
            "volume vol-full cannot grow from 1073741824 bytes to 8589934592: pool main has"
                + " 2147483648 bytes available, 7516192768 more are needed; it stays usable at"
                + " 1073741824 bytes");
    nodeRuns(new LocalRequests(engine));

    StorageException refused =
        catchThrowableOfType(
            StorageException.class, () -> controller(LONG).expand("vol-full", 8 * GIB, 0));

    assertThat(refused.reason()).isEqualTo(StorageException.Reason.OUT_OF_RANGE);
    assertThat(refused.getMessage())
        .startsWith("node " + node + " refused: volume vol-full cannot grow")
        .contains("pool main has 2147483648 bytes available");
    assertThat(stored("vol-full")).as("deleted, so a retry is judged afresh").isEmpty();
    // The room was freed: the resizer's retry of the same size succeeds.
    assertThat(controller(LONG).expand("vol-full", 8 * GIB, 0))
        .contains(new ExpandResult(8 * GIB, false));
  }

  @Test
  void aNodeDriverThatDoesNotKnowTheOperationLeavesItToTheKubelet() throws Exception {
    nodeExists();
    volume("vol-old-node");
    nodeRuns(request -> NodeRequestHandler.Outcome.refused("this driver does not know it"));

    assertThat(controller(LONG).expand("vol-old-node", 2 * GIB, 0)).isEmpty();
  }

  @Test
  void aVolumeNoPersistentVolumeNamesIsLeftToTheKubelet() throws Exception {
    volume("vol-known");
    assertThat(controller(SHORT).expand("vol-unknown", 2 * GIB, 0)).isEmpty();
  }

  static void await(String what, BooleanSupplier condition) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as(what).isLessThan(deadline);
      sleep(20);
    }
  }

  static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
