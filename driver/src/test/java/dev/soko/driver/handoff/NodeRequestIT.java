package dev.soko.driver.handoff;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import dev.soko.driver.handoff.NodeRequestClient.Answer;
import dev.soko.driver.handoff.NodeRequestHandler.Outcome;
import dev.soko.driver.kube.KubeApi;
import dev.soko.driver.model.GroupSnapshot;
import dev.soko.driver.model.Snapshot;
import dev.soko.driver.testing.FakeVolumeManager;
import dev.soko.driver.testing.NodePluginApiServer;
import dev.soko.driver.volume.SpanningGroupId;
import dev.soko.driver.volume.StorageException;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntry;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * The controller → node path against a real kube-apiserver (kube-api-test, RBAC on), each side
 * under its own ServiceAccount with the rules the operator renders: a request is carried out once
 * and acknowledged; and its faults: the node's driver down during a request, the controller
 * restarted mid-request, a request superseded before the node saw it, a node that fails and
 * retries, a node restarted after applying, and a node plugin that tries to write a spec.
 */
class NodeRequestIT extends HandoffCluster {
  static final AtomicInteger NODES = new AtomicInteger();
  static final String OPERATION = "ModifyVolume";
  static final Duration SHORT = Duration.ofSeconds(1);
  static final Duration LONG = Duration.ofSeconds(20);

  /** A node of its own per test: requests a test leaves behind are never another test's. */
  final String node = "node-" + NODES.incrementAndGet();

  final List<NodeRequest> handled = Collections.synchronizedList(new ArrayList<>());

  /** A PV of this driver on this test's node, and its owner once the controller has seen it. */
  VolumeOwners.Owner volume(String id) {
    return volumeOn(node, id);
  }

  NodeRequestWatch node(Function<NodeRequest, Outcome> handler) {
    NodeRequestWatch watch =
        new NodeRequestWatch(
            nodeApi,
            NodePluginApiServer.NAMESPACE,
            node,
            request -> {
              handled.add(request);
              return handler.apply(request);
            },
            Duration.ofSeconds(5),
            SHORT);
    running.add(watch);
    watch.start();
    return watch;
  }

  NodeRequestClient controller(Duration wait) {
    return new NodeRequestClient(controllerApi, NodePluginApiServer.NAMESPACE, wait);
  }

  GenericKubernetesResource stored(String volumeId) {
    return admin
        .genericKubernetesResources("soko.dev/v1alpha1", "NodeRequest")
        .inNamespace(NodePluginApiServer.NAMESPACE)
        .withName(NodeRequests.name(OPERATION, volumeId))
        .get();
  }

  static Outcome applied(NodeRequest request) {
    return Outcome.applied();
  }

  @Test
  void aRequestIsCarriedOutByItsNodeOnceAndAnsweredAgainWithoutRedoingIt() throws Exception {
    VolumeOwners.Owner owner = volume("vol-applied");
    node(NodeRequestIT::applied);
    NodeRequestClient controller = controller(LONG);

    Map<String, String> limits = Map.of("readIops", "200", "writeIops", "100");
    for (int call = 0; call < 2; call++) {
      Answer answer = controller.request(owner, "vol-applied", OPERATION, limits);
      assertThat(answer.kind()).isEqualTo(Answer.Kind.APPLIED);
      assertThat(answer.status())
          .asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.MAP)
          .containsEntry("phase", "Applied");
    }

    assertThat(handled)
        .containsExactly(
            new NodeRequest(
                NodeRequests.name(OPERATION, "vol-applied"), 1, "vol-applied", OPERATION, limits));
    GenericKubernetesResource request = stored("vol-applied");
    assertThat(request.getMetadata().getGeneration()).isEqualTo(1);
    assertThat(request.getMetadata().getLabels()).containsEntry("soko.dev/node", node);
    assertThat(request.getMetadata().getOwnerReferences())
        .singleElement()
        .satisfies(
            o -> {
              assertThat(o.getKind()).isEqualTo("PersistentVolume");
              assertThat(o.getUid()).isEqualTo(owner.pvUid());
            });
    assertThat(request.getAdditionalProperties().get("status"))
        .isEqualTo(Map.of("observedGeneration", 1, "phase", "Applied"));
    assertThat(request.getMetadata().getManagedFields())
        .extracting(ManagedFieldsEntry::getManager, ManagedFieldsEntry::getSubresource)
        .containsExactlyInAnyOrder(
            org.assertj.core.groups.Tuple.tuple("soko-controller", null),
            org.assertj.core.groups.Tuple.tuple("soko-driver", "status"));
  }

  @Test
  void aRefusalAnswersWithTheNodesReason() throws Exception {
    VolumeOwners.Owner owner = volume("vol-refused");
    node(request -> Outcome.refused("readIops must be a whole number, not \"fast\""));

    Answer answer =
        controller(LONG).request(owner, "vol-refused", OPERATION, Map.of("readIops", "fast"));

    assertThat(answer.kind()).isEqualTo(Answer.Kind.REFUSED);
    assertThat(answer.message())
        .isEqualTo("node " + node + " refused: readIops must be a whole number, not \"fast\"");
  }

  @Test
  void whileTheNodesDriverIsDownTheCallStaysRetryableAndSucceedsOnceItIsBack() throws Exception {
    VolumeOwners.Owner owner = volume("vol-node-down");
    Map<String, String> limits = Map.of("readIops", "300");

    Answer whileDown = controller(SHORT).request(owner, "vol-node-down", OPERATION, limits);
    assertThat(whileDown.kind()).isEqualTo(Answer.Kind.PENDING);
    assertThat(whileDown.message())
        .startsWith("node " + node + " has not applied NodeRequest modifyvolume-")
        .endsWith("(generation 1) yet: is its driver running?");

    node(NodeRequestIT::applied);
    assertThat(controller(LONG).request(owner, "vol-node-down", OPERATION, limits).kind())
        .isEqualTo(Answer.Kind.APPLIED);
    assertThat(handled).hasSize(1);
  }

  @Test
  void aControllerRestartedMidRequestFindsTheNodesAnswerWithoutANewGeneration() throws Exception {
    VolumeOwners.Owner owner = volume("vol-controller-restart");
    Map<String, String> limits = Map.of("writeBytesPerSecond", "4194304");
    AtomicInteger calls = new AtomicInteger();
    node(
        request -> {
          calls.incrementAndGet();
          sleep(1500); // the first controller gives up before the node answers
          return Outcome.applied();
        });

    Answer first =
        controller(Duration.ofMillis(200))
            .request(owner, "vol-controller-restart", OPERATION, limits);
    assertThat(first.kind()).isEqualTo(Answer.Kind.PENDING);

    // A new process: nothing of the first client is kept.
    Answer afterRestart =
        controller(LONG).request(owner, "vol-controller-restart", OPERATION, limits);
    assertThat(afterRestart.kind()).isEqualTo(Answer.Kind.APPLIED);
    assertThat(calls).hasValue(1);
    assertThat(stored("vol-controller-restart").getMetadata().getGeneration()).isEqualTo(1);
  }

  @Test
  void aRequestSupersededBeforeTheNodeSawItIsNeverCarriedOut() throws Exception {
    VolumeOwners.Owner owner = volume("vol-superseded");
    Map<String, String> older = Map.of("readIops", "100");
    Map<String, String> newer = Map.of("readIops", "500");

    assertThat(controller(SHORT).request(owner, "vol-superseded", OPERATION, older).kind())
        .isEqualTo(Answer.Kind.PENDING);
    assertThat(controller(SHORT).request(owner, "vol-superseded", OPERATION, newer).kind())
        .isEqualTo(Answer.Kind.PENDING);
    node(NodeRequestIT::applied);

    assertThat(controller(LONG).request(owner, "vol-superseded", OPERATION, newer).kind())
        .isEqualTo(Answer.Kind.APPLIED);
    assertThat(handled).extracting(NodeRequest::parameters).containsExactly(newer);
    assertThat(handled).extracting(NodeRequest::generation).containsExactly(2L);
    // Going back to the older parameters is a new generation, carried out in turn.
    assertThat(controller(LONG).request(owner, "vol-superseded", OPERATION, older).kind())
        .isEqualTo(Answer.Kind.APPLIED);
    assertThat(handled).extracting(NodeRequest::parameters).containsExactly(newer, older);
  }

  @Test
  void aNodeThatCouldNotApplyARequestRetriesOnItsTimerUntilItCan() throws Exception {
    VolumeOwners.Owner owner = volume("vol-retried");
    List<Long> calls = Collections.synchronizedList(new ArrayList<>());
    node(
        request -> {
          calls.add(System.nanoTime());
          return calls.size() == 1
              ? Outcome.failed("the volume's cgroup is not there yet")
              : Outcome.applied();
        });

    Answer answer = controller(LONG).request(owner, "vol-retried", OPERATION, Map.of());

    assertThat(answer.kind()).isEqualTo(Answer.Kind.APPLIED);
    assertThat(calls).hasSize(2);
    // Retried a full retry period (a second here) after it failed: neither at once by the event of
    // its own status write nor early by a timer tick that happened to come soon after the failure.
    assertThat(TimeUnit.NANOSECONDS.toMillis(calls.get(1) - calls.get(0)))
        .isGreaterThanOrEqualTo(SHORT.toMillis());
  }

  @Test
  void aFailureTheNodeKeepsHittingStaysRetryableWithItsReason() throws Exception {
    VolumeOwners.Owner owner = volume("vol-failing");
    node(request -> Outcome.failed("the volume's cgroup is not there yet"));

    Answer answer =
        controller(Duration.ofSeconds(3)).request(owner, "vol-failing", OPERATION, Map.of());

    assertThat(answer)
        .isEqualTo(
            new Answer(
                Answer.Kind.PENDING,
                "node " + node + " could not apply it yet: the volume's cgroup is not there yet"));
  }

  @Test
  void aRestartedNodeDoesNotRedoWhatItAlreadyApplied() throws Exception {
    VolumeOwners.Owner first = volume("vol-before-restart");
    VolumeOwners.Owner second = volume("vol-after-restart");
    NodeRequestWatch before = node(NodeRequestIT::applied);
    assertThat(controller(LONG).request(first, "vol-before-restart", OPERATION, Map.of()).kind())
        .isEqualTo(Answer.Kind.APPLIED);
    before.close();

    node(NodeRequestIT::applied);
    // Answered only once the new watch has listed, which it did before handling this one.
    assertThat(controller(LONG).request(second, "vol-after-restart", OPERATION, Map.of()).kind())
        .isEqualTo(Answer.Kind.APPLIED);

    assertThat(handled)
        .extracting(NodeRequest::volumeId)
        .containsExactly("vol-before-restart", "vol-after-restart");
  }

  @Test
  void theNodePluginCanWriteAStatusButNeverASpec() throws Exception {
    VolumeOwners.Owner owner = volume("vol-rbac");
    controller(SHORT).request(owner, "vol-rbac", OPERATION, Map.of("readIops", "100"));
    String name = NodeRequests.name(OPERATION, "vol-rbac");
    String spec =
        "{\"apiVersion\":\"soko.dev/v1alpha1\",\"kind\":\"NodeRequest\",\"metadata\":{\"name\":\""
            + name
            + "\"},\"spec\":{\"node\":\""
            + node
            + "\",\"volumeId\":\"vol-rbac\","
            + "\"operation\":\"ModifyVolume\",\"parameters\":{}}}";

    KubeApi.Response response =
        nodeApi.send(
            "PATCH",
            NodeRequests.collection(NodePluginApiServer.NAMESPACE)
                + "/"
                + name
                + "?fieldManager=soko-driver&force=true",
            NodeRequests.APPLY,
            spec);

    assertThat(response.status()).isEqualTo(403);
    assertThat(stored("vol-rbac").getAdditionalProperties().get("spec"))
        .asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.MAP)
        .containsEntry("parameters", Map.of("readIops", "100"));
  }

  @Test
  void aModifyVolumeCallReachesTheOwningNodesEngineAndARefusalComesBackAsInvalidArgument()
      throws Exception {
    volume("vol-modified");
    FakeVolumeManager engine = new FakeVolumeManager();
    carriedOutBy(engine);
    RemoteModify modify = new RemoteModify(owners, controller(LONG));

    modify.modify("vol-modified", Map.of("readIOPS", "200"));
    assertThat(engine.lastModify).isEqualTo(Map.of("readIOPS", "200"));

    engine.nextFailure = StorageException.invalid("readIOPS must be a whole number");
    assertThatThrownBy(() -> modify.modify("vol-modified", Map.of("readIOPS", "x")))
        .isInstanceOfSatisfying(
            StorageException.class,
            e -> assertThat(e.reason()).isEqualTo(StorageException.Reason.INVALID_ARGUMENT))
        .hasMessage("node " + node + " refused: readIOPS must be a whole number");
    assertThatThrownBy(() -> modify.modify("vol-no-pv", Map.of()))
        .isInstanceOfSatisfying(
            StorageException.class,
            e -> assertThat(e.reason()).isEqualTo(StorageException.Reason.NOT_FOUND));
  }

  @Test
  void aGroupSnapshotIsTakenByTheVolumesNodeAndItsIdNamesThatNodeForGetAndDelete()
      throws Exception {
    FakeVolumeManager engine = new FakeVolumeManager().holding("vol-data", "vol-log");
    volume("vol-data");
    volume("vol-log");
    carriedOutBy(engine);
    RemoteSnapshots remote = new RemoteSnapshots(owners, controller(LONG));

    GroupSnapshot group = remote.createGroupSnapshot("backup", List.of("vol-data", "vol-log"));

    GroupSnapshot taken = engine.groups.values().iterator().next();
    assertThat(group.id()).isEqualTo(taken.id() + "@" + node);
    assertThat(group.createdAt()).isEqualTo(taken.createdAt());
    assertThat(group.members())
        .extracting(Snapshot::id, Snapshot::sourceVolumeId, Snapshot::groupSnapshotId)
        .containsExactly(
            tuple(taken.members().get(0).id(), "vol-data", group.id()),
            tuple(taken.members().get(1).id(), "vol-log", group.id()));
    List<String> members = group.members().stream().map(Snapshot::id).toList();
    assertThat(remote.getGroupSnapshot(group.id(), members).members())
        .extracting(Snapshot::id)
        .containsExactlyElementsOf(members);

    remote.deleteGroupSnapshot(group.id(), members);

    assertThat(engine.groups).isEmpty();
    assertThat(engine.lastGroupMembers).containsExactlyElementsOf(members);
    assertThat(requests()).as("group requests are deleted once answered").isEmpty();
    remote.deleteGroupSnapshot("group-neverneverneverneve", List.of()); // no node: unknown, ok
    assertThatThrownBy(() -> remote.getGroupSnapshot("group-neverneverneverneve", List.of()))
        .isInstanceOfSatisfying(
            StorageException.class,
            e -> assertThat(e.reason()).isEqualTo(StorageException.Reason.NOT_FOUND));
  }

  @Test
  void aGroupOnTwoNodesGoesAcrossNodesAndItsIdFindsEachNodesPartForGetAndDelete() throws Exception {
    String other = "node-" + NODES.incrementAndGet();
    FakeVolumeManager here = new FakeVolumeManager().holding("vol-near");
    FakeVolumeManager there = new FakeVolumeManager().holding("vol-far");
    volume("vol-near");
    volumeOn(other, "vol-far");
    carriedOutBy(here);
    carriedOutBy(other, there);
    SpanningGroupId id = new SpanningGroupId("group-aaaaaaaaaaaaaaaaaaaa", List.of(node, other));
    here.groups.put(id.id(), part(id, "snap-here", "vol-near"));
    there.groups.put(id.id(), part(id, "snap-there", "vol-far"));
    List<Map<String, List<String>>> asked = new ArrayList<>();
    RemoteSnapshots remote =
        new RemoteSnapshots(
            owners,
            controller(LONG),
            Optional.of(
                (name, byNode) -> {
                  asked.add(byNode);
                  return part(id, "snap-here", "vol-near");
                }));

    remote.createGroupSnapshot("across", List.of("vol-near", "vol-far"));

    assertThat(asked)
        .as("each node's members, for the coordinator; no NodeRequest for the create")
        .containsExactly(Map.of(node, List.of("vol-near"), other, List.of("vol-far")));
    assertThat(remote.getGroupSnapshot(id.id(), List.of("snap-there", "snap-here")).members())
        .extracting(Snapshot::id, Snapshot::groupSnapshotId)
        .containsExactlyInAnyOrder(tuple("snap-here", id.id()), tuple("snap-there", id.id()));
    assertThatThrownBy(() -> remote.getGroupSnapshot(id.id(), List.of("snap-here")))
        .isInstanceOfSatisfying(
            StorageException.class,
            e -> assertThat(e.reason()).isEqualTo(StorageException.Reason.INVALID_ARGUMENT));

    remote.deleteGroupSnapshot(id.id(), List.of("snap-here", "snap-there"));

    assertThat(here.groups).isEmpty();
    assertThat(there.groups).isEmpty();
    remote.deleteGroupSnapshot(id.id(), List.of()); // every part gone: succeeds
    assertThat(requests()).as("group requests are deleted once answered").isEmpty();
  }

  private static GroupSnapshot part(SpanningGroupId id, String snapshot, String volume) {
    Instant at = Instant.ofEpochSecond(100, 7);
    return new GroupSnapshot(
        id.id(), "", List.of(new Snapshot(snapshot, "", volume, 1, at, true, id.id())), at);
  }

  @Test
  void aNodesRefusalComesBackWithItsOwnCode() throws Exception {
    FakeVolumeManager engine = new FakeVolumeManager().holding("vol-here");
    volume("vol-here");
    carriedOutBy(engine);
    RemoteSnapshots remote = new RemoteSnapshots(owners, controller(LONG));
    engine.nextFailure =
        StorageException.notFound(
            "volume vol-there is not on this node %s: a group snapshot's volumes must all be on"
                + " one node",
            node);

    assertThatThrownBy(() -> remote.createGroupSnapshot("spans", List.of("vol-here", "vol-there")))
        .isInstanceOfSatisfying(
            StorageException.class,
            e -> assertThat(e.reason()).isEqualTo(StorageException.Reason.NOT_FOUND))
        .hasMessageContaining("must all be on one node");
    assertThat(requests()).isEmpty();
  }

  @Test
  void aGroupSnapshotAskedWhileTheNodeIsDownIsTakenOnceWhenItIsBack() throws Exception {
    FakeVolumeManager engine = new FakeVolumeManager().holding("vol-a", "vol-b");
    volume("vol-a");
    volume("vol-b");

    assertThatThrownBy(
            () ->
                new RemoteSnapshots(owners, controller(SHORT))
                    .createGroupSnapshot("nightly", List.of("vol-a", "vol-b")))
        .isInstanceOfSatisfying(
            StorageException.class,
            e -> assertThat(e.reason()).isEqualTo(StorageException.Reason.UNAVAILABLE))
        .hasMessageContaining("is its driver running?");
    carriedOutBy(engine);
    GroupSnapshot group =
        new RemoteSnapshots(owners, controller(LONG))
            .createGroupSnapshot("nightly", List.of("vol-a", "vol-b"));

    assertThat(engine.groups).as("one group: the retry found the request").hasSize(1);
    assertThat(group.id()).startsWith(engine.groups.keySet().iterator().next() + "@");
  }

  @Test
  void aSnapshotTakenThroughTheControllerIsFoundAgainToBeDeleted() throws Exception {
    FakeVolumeManager engine = new FakeVolumeManager().holding("vol-single");
    volume("vol-single");
    carriedOutBy(engine);
    RemoteSnapshots remote = new RemoteSnapshots(owners, controller(LONG));

    Snapshot snapshot = remote.createSnapshot("single", "vol-single");

    assertThat(engine.snapshots).containsKey(snapshot.id());
    assertThat(snapshot.sourceVolumeId()).isEqualTo("vol-single");
    assertThat(requests()).hasSize(1);
    remote.deleteSnapshot(snapshot.id());
    assertThat(engine.snapshots).doesNotContainKey(snapshot.id());
    assertThat(requests()).isEmpty();
    remote.deleteSnapshot(snapshot.id()); // gone: succeeds
  }

  /** This test's node carrying out its requests with {@code engine}. */
  void carriedOutBy(FakeVolumeManager engine) {
    carriedOutBy(node, engine);
  }

  void carriedOutBy(String byNode, FakeVolumeManager engine) {
    NodeRequestWatch watch =
        new NodeRequestWatch(
            nodeApi,
            NodePluginApiServer.NAMESPACE,
            byNode,
            new LocalRequests(engine),
            Duration.ofSeconds(5),
            SHORT);
    running.add(watch);
    watch.start();
  }

  /** This test's node's requests in the API server. */
  List<GenericKubernetesResource> requests() {
    return admin
        .genericKubernetesResources("soko.dev/v1alpha1", "NodeRequest")
        .inNamespace(NodePluginApiServer.NAMESPACE)
        .withLabel("soko.dev/node", node)
        .list()
        .getItems();
  }

  @Test
  void aVolumeWithoutAPersistentVolumeHasNoOwner() throws Exception {
    volume("vol-known");
    assertThat(owners.synced()).isTrue();
    assertThat(owners.of("vol-unknown")).isEmpty();
  }

  static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
