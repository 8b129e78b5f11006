package dev.soko.operator.reconcile.observe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.operator.model.ClusterFacts;
import dev.soko.operator.model.DesiredState;
import dev.soko.operator.model.Fixtures;
import dev.soko.operator.model.KubernetesVersion;
import dev.soko.operator.model.Names;
import dev.soko.operator.model.VersionsTable;
import dev.soko.operator.reconcile.kinds.FakeClusterCache;
import io.fabric8.kubernetes.api.model.APIResourceBuilder;
import io.fabric8.kubernetes.api.model.APIResourceListBuilder;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What the observer learns of the group snapshot API through discovery (fabric8's mock API server
 * answers it), and what the model makes of that: the controller's group snapshotter, the group
 * class and the group rules exactly where the whole API is served.
 */
@EnableKubernetesMockClient
class ClusterObserverTest {
  private static final String GROUPS = "groupsnapshot.storage.k8s.io/v1";
  private static final String DEFAULT = ClusterObserver.DEFAULT_GROUP_SNAPSHOT_CLASS;

  KubernetesClient client;
  KubernetesMockServer server;

  private final VersionsTable table = VersionsTable.load();

  /** Discovery of a group-version answers with these resources; any other answers 404. */
  private void serves(String groupVersion, String... resources) {
    var list = new APIResourceListBuilder().withGroupVersion(groupVersion);
    for (String r : resources) {
      list.addToResources(
          new APIResourceBuilder()
              .withName(r)
              .withKind(r)
              .withNamespaced(false)
              .withVerbs("get", "list", "watch")
              .build());
    }
    server.expect().get().withPath("/apis/" + groupVersion).andReturn(200, list.build()).always();
  }

  private void servesTheWholeGroupApi() {
    serves(
        GROUPS,
        "volumegroupsnapshotclasses",
        "volumegroupsnapshotcontents",
        "volumegroupsnapshots");
  }

  private ClusterFacts facts(FakeClusterCache cache) {
    var observer =
        new ClusterObserver(
            client, () -> KubernetesVersion.parse("1.34"), table, Duration.ofMinutes(10));
    return observer.facts(Fixtures.sample(), cache);
  }

  private static GenericKubernetesResource groupClass(String name, String cluster) {
    GenericKubernetesResource c =
        new GenericKubernetesResourceBuilder()
            .withApiVersion(GROUPS)
            .withKind("VolumeGroupSnapshotClass")
            .withNewMetadata()
            .withName(name)
            .addToAnnotations(DEFAULT, "true")
            .endMetadata()
            .build();
    if (cluster != null) {
      c.getMetadata().setLabels(Map.of(Names.LABEL_CLUSTER, cluster));
    }
    return c;
  }

  /** A cache holding someone else's default group class and Soko's own default one. */
  private static FakeClusterCache withDefaultGroupClasses() {
    return new FakeClusterCache()
        .with(groupClass("their-groups", null))
        .with(groupClass("fast-snapshots", "fast"));
  }

  private static List<String> controllerContainers(DesiredState d) {
    return d.controllerDeployment().getSpec().getTemplate().getSpec().getContainers().stream()
        .map(Container::getName)
        .toList();
  }

  private static boolean grantsGroups(DesiredState d) {
    return d.rbac().stream()
        .filter(o -> o instanceof ClusterRole)
        .flatMap(o -> ((ClusterRole) o).getRules().stream())
        .anyMatch(r -> r.getApiGroups().contains("groupsnapshot.storage.k8s.io"));
  }

  @Test
  void whereTheGroupApiIsServedGroupSnapshotsRunAndSomeoneElsesDefaultGroupClassIsKept() {
    serves("snapshot.storage.k8s.io/v1", "volumesnapshotclasses");
    servesTheWholeGroupApi();
    ClusterFacts facts = facts(withDefaultGroupClasses());
    assertThat(facts.servesGroupSnapshots()).isTrue();
    assertThat(facts.foreignDefaultGroupSnapshotClass())
        .as("the default group class that is not Soko's")
        .isEqualTo("their-groups");
    assertThat(facts.foreignDefaultSnapshotClass()).isNull();

    var sc = Fixtures.sample();
    sc.getSpec().getSnapshots().setDefaultClass(true);
    DesiredState d = DesiredState.of(sc, table, facts);
    assertThat(d.groupSnapshotClass()).isNotNull();
    assertThat(d.groupSnapshotClass().getMetadata().getAnnotations())
        .as("not the default while another group class is")
        .isNullOrEmpty();
    assertThat(d.snapshotClass().getMetadata().getAnnotations())
        .containsEntry("snapshot.storage.kubernetes.io/is-default-class", "true");
    assertThat(controllerContainers(d)).contains("csi-group-snapshotter");
    assertThat(grantsGroups(d)).isTrue();
  }

  @Test
  void withoutTheGroupApiNoGroupSnapshotterNoGroupClassNoGroupRules() {
    serves("snapshot.storage.k8s.io/v1", "volumesnapshotclasses");
    ClusterFacts facts = facts(withDefaultGroupClasses());
    assertThat(facts.serves(ClusterFacts.VOLUME_SNAPSHOT_CLASSES)).isTrue();
    assertThat(facts.servesGroupSnapshots()).isFalse();
    assertThat(facts.foreignDefaultGroupSnapshotClass()).isNull();

    DesiredState d = DesiredState.of(Fixtures.sample(), table, facts);
    assertThat(d.snapshotClass()).isNotNull();
    assertThat(d.groupSnapshotClass()).isNull();
    assertThat(d.all()).noneMatch(o -> o.getKind().equals("VolumeGroupSnapshotClass"));
    assertThat(controllerContainers(d)).containsExactly("soko-driver", "csi-resizer");
    assertThat(grantsGroups(d)).isFalse();
  }

  /** Group classes without group contents or group snapshots are no group API to serve. */
  @Test
  void aPartOfTheGroupApiIsNotEnough() {
    serves("snapshot.storage.k8s.io/v1", "volumesnapshotclasses");
    serves(GROUPS, "volumegroupsnapshotclasses", "volumegroupsnapshotcontents");
    ClusterFacts facts = facts(new FakeClusterCache());
    assertThat(facts.serves(ClusterFacts.VOLUME_GROUP_SNAPSHOT_CLASSES)).isTrue();
    assertThat(facts.servesGroupSnapshots()).isFalse();
    DesiredState d = DesiredState.of(Fixtures.sample(), table, facts);
    assertThat(d.groupSnapshotClass()).isNull();
    assertThat(controllerContainers(d)).doesNotContain("csi-group-snapshotter");
  }

  @Test
  void theGroupApiWithoutTheSnapshotApiRunsNoSnapshotsAtAll() {
    servesTheWholeGroupApi();
    DesiredState d = DesiredState.of(Fixtures.sample(), table, facts(new FakeClusterCache()));
    assertThat(d.snapshotClass()).isNull();
    assertThat(d.groupSnapshotClass()).isNull();
    assertThat(controllerContainers(d)).doesNotContain("csi-group-snapshotter");
    assertThat(d.nodeDaemonSet().getSpec().getTemplate().getSpec().getContainers())
        .noneMatch(c -> c.getName().equals("csi-snapshotter"));
    assertThat(grantsGroups(d)).isFalse();
  }
}
