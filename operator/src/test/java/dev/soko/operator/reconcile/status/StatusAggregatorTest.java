package dev.soko.operator.reconcile.status;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.introspect.BeanPropertyDefinition;
import dev.soko.api.v1alpha1.Registration;
import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.api.v1alpha1.StorageClusterStatus;
import dev.soko.api.v1alpha1.StorageNode;
import dev.soko.operator.model.ClusterFacts;
import dev.soko.operator.model.DesiredState;
import dev.soko.operator.model.Fixtures;
import dev.soko.operator.model.KubernetesVersion;
import dev.soko.operator.model.VersionsTable;
import dev.soko.operator.reconcile.observe.ClusterObserver;
import dev.soko.operator.reconcile.observe.Reports;
import dev.soko.operator.reconcile.observe.StorageNodeReports;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.DaemonSetBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.storage.CSIStorageCapacityBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class StatusAggregatorTest {
  private static final String T0 = "2026-01-01T00:00:00Z";
  private static final String T1 = "2026-01-01T00:05:00Z";

  private static Condition condition(StorageClusterStatus s, String type) {
    return Conditions.find(s.getConditions(), type);
  }

  private static StorageClusterStatus failed(StorageCluster sc, String reason, String at) {
    return new StatusAggregator(sc, "1.2.3", at).error(reason, "x").build();
  }

  @Test
  void failureIsDegradedAndNotReady() {
    StorageCluster sc = Fixtures.sample();
    sc.getMetadata().setGeneration(3L);
    StorageClusterStatus s =
        new StatusAggregator(sc, "1.2.3", T0).error("DriverNameConflict", "taken").build();
    assertThat(s.getObservedGeneration()).isEqualTo(3L);
    assertThat(s.getOperatorVersion()).isEqualTo("1.2.3");
    assertThat(condition(s, "Degraded").getStatus()).isEqualTo("True");
    assertThat(condition(s, "Degraded").getReason()).isEqualTo("DriverNameConflict");
    assertThat(condition(s, "Degraded").getMessage()).isEqualTo("taken");
    assertThat(condition(s, "Ready").getStatus()).isEqualTo("False");
  }

  @Test
  void aRejectedApplyAfterReadyTakesReadyAwayAndKeepsWhatWasObserved() {
    StorageCluster sc = Fixtures.sample();
    sc.getMetadata().setGeneration(1L);
    sc.setStatus(applied(sc, workloads(sc, 3, 3, 3)));
    assertThat(condition(sc.getStatus(), "Ready").getStatus()).isEqualTo("True");
    sc.getMetadata().setGeneration(2L);
    StorageClusterStatus s =
        new StatusAggregator(sc, "1.2.3", T1)
            .error("AdmissionDenied", "apply of DaemonSet refused")
            .build();
    assertThat(condition(s, "Ready").getStatus()).isEqualTo("False");
    assertThat(condition(s, "Ready").getReason()).isEqualTo("AdmissionDenied");
    assertThat(condition(s, "Degraded").getLastTransitionTime()).isEqualTo(T1);
    assertThat(s.getNodes().available()).isEqualTo(3);
    assertThat(s.getImages()).isEqualTo(sc.getStatus().getImages());
    assertThat(s.getAppliedObjects()).isNull();
  }

  @Test
  void unchangedConditionKeepsItsTransitionTimeSoStatusIsTheSame() {
    StorageCluster sc = Fixtures.sample();
    sc.getMetadata().setGeneration(1L);
    StorageClusterStatus first = failed(sc, "InvalidSpec", T0);
    sc.setStatus(first);
    StorageClusterStatus second = failed(sc, "InvalidSpec", T1);
    assertThat(StatusAggregator.same(second, first)).isTrue();
    assertThat(condition(second, "Degraded").getLastTransitionTime()).isEqualTo(T0);
    // A round trip through JSON (what the informer hands back) is still the same.
    StorageClusterStatus read =
        Serialization.unmarshal(Serialization.asJson(first), StorageClusterStatus.class);
    assertThat(StatusAggregator.same(read, first)).isTrue();
  }

  /**
   * Every property Jackson serializes takes part in {@link StatusAggregator#same}: a status that
   * differs from another in any one of them is not the same. A new field takes part without anyone
   * writing a comparison for it; one that is not serialized is not stored either.
   */
  @Test
  void statusesThatDifferInAnyPropertyAreNotTheSame() {
    var mapper = Serialization.jsonMapper();
    JavaType type = mapper.constructType(StorageClusterStatus.class);
    List<BeanPropertyDefinition> properties =
        mapper.getSerializationConfig().introspect(type).findProperties();
    Set<String> names = new HashSet<>();
    for (BeanPropertyDefinition p : properties) {
      names.add(p.getName());
      var base = mapper.createObjectNode();
      StorageClusterStatus a = mapper.convertValue(base, StorageClusterStatus.class);
      var changed = base.deepCopy();
      changed.set(p.getName(), sampleValue(p.getPrimaryType(), mapper));
      StorageClusterStatus b = mapper.convertValue(changed, StorageClusterStatus.class);
      assertThat(StatusAggregator.same(a, b)).as(p.getName()).isFalse();
    }
    assertThat(names).contains("observedGeneration", "conditions", "nodes", "pools", "morePools");
  }

  /** A non-empty JSON value for a property of this type. */
  private static com.fasterxml.jackson.databind.JsonNode sampleValue(
      JavaType type, com.fasterxml.jackson.databind.ObjectMapper mapper) {
    Class<?> raw = type.getRawClass();
    if (Number.class.isAssignableFrom(raw)) {
      return mapper.getNodeFactory().numberNode(7);
    }
    if (raw.isEnum()) {
      return mapper.getNodeFactory().textNode(raw.getEnumConstants()[0].toString());
    }
    if (raw == String.class) {
      return mapper.getNodeFactory().textNode("v");
    }
    if (raw == Boolean.class) {
      return mapper.getNodeFactory().booleanNode(true);
    }
    if (List.class.isAssignableFrom(raw)) {
      return mapper.createArrayNode().add(sampleValue(type.getContentType(), mapper));
    }
    if (java.util.Map.class.isAssignableFrom(raw)) {
      return mapper.createObjectNode().put("k", "v");
    }
    BeanPropertyDefinition first =
        mapper
            .getSerializationConfig()
            .introspect(mapper.constructType(raw))
            .findProperties()
            .get(0);
    return mapper
        .createObjectNode()
        .set(first.getName(), sampleValue(first.getPrimaryType(), mapper));
  }

  private static StorageClusterStatus applied(StorageCluster sc) {
    return applied(sc, null);
  }

  private static StorageClusterStatus applied(
      StorageCluster sc, ClusterObserver.Workloads workloads) {
    DesiredState desired =
        DesiredState.of(
            sc, VersionsTable.load(), ClusterFacts.offline(KubernetesVersion.parse("1.34")));
    StatusAggregator a =
        new StatusAggregator(sc, "1.2.3", T0)
            .applied(desired, desired.all().size())
            .kubernetesVersion("v1.34.0")
            .compatibility(List.of());
    if (workloads != null) {
      a.workloads(workloads, sc.getSpec().getController().getReplicas());
    }
    return a.build();
  }

  /** {@code nodes} desired, {@code ready} pods ready, {@code registered} of those registered. */
  static ClusterObserver.Workloads workloads(
      StorageCluster sc, int nodes, int ready, int registered) {
    List<Pod> pods = new ArrayList<>();
    Set<String> names = new HashSet<>();
    for (int i = 0; i < nodes; i++) {
      pods.add(
          i < ready ? NodeReadinessTest.readyPod("n" + i) : NodeReadinessTest.crashing("n" + i));
      if (i < registered) {
        names.add("n" + i);
      }
    }
    DaemonSet ds =
        new DaemonSetBuilder()
            .withNewStatus()
            .withDesiredNumberScheduled(nodes)
            .withNumberReady(ready)
            .endStatus()
            .build();
    Deployment dep =
        new DeploymentBuilder()
            .withNewStatus()
            .withReadyReplicas(sc.getSpec().getController().getReplicas())
            .endStatus()
            .build();
    return new ClusterObserver.Workloads(ds, dep, names, pods, List.of(), List.of());
  }

  @Test
  void everyStatusNamesTheOperatorThatWroteItSoAnUpgradedOperatorWritesOnce() {
    StorageCluster sc = Fixtures.sample();
    StorageClusterStatus written = applied(sc);
    assertThat(written.getOperatorVersion()).isEqualTo("1.2.3");
    sc.setStatus(written);
    assertThat(StatusAggregator.same(applied(sc), written)).isTrue();
    sc.getStatus().setOperatorVersion("1.2.2");
    assertThat(StatusAggregator.same(applied(sc), sc.getStatus()))
        .as("a status an older operator wrote is written again")
        .isFalse();
  }

  @Test
  void statusShowsBuiltInRegistrationAndOnlyTheImagesThePodsRun() {
    StorageClusterStatus s = applied(Fixtures.sample());
    assertThat(s.getRegistration()).isEqualTo(Registration.BuiltIn);
    assertThat(s.getImages())
        .containsOnlyKeys(
            "soko-driver",
            "csi-provisioner",
            "csi-snapshotter",
            "csi-resizer",
            "csi-group-snapshotter",
            "csi-snapshot-metadata");
    assertThat(s.getImages().get("csi-group-snapshotter"))
        .as("the controller's group snapshotter runs the snapshotter's image")
        .isEqualTo(s.getImages().get("csi-snapshotter"));
  }

  @Test
  void statusShowsSidecarRegistrationWithTheRegistrarAndLivenessProbeImages() {
    StorageCluster sc = Fixtures.sample();
    sc.getSpec().getDriver().setRegistration(Registration.Sidecars);
    StorageClusterStatus s = applied(sc);
    assertThat(s.getRegistration()).isEqualTo(Registration.Sidecars);
    assertThat(s.getImages())
        .containsEntry("node-driver-registrar", "sig-storage/csi-node-driver-registrar:v2.17.0")
        .containsEntry("liveness-probe", "sig-storage/livenessprobe:v2.19.0");
  }

  @Test
  void aFailedReconcileKeepsTheRegistrationLastApplied() {
    StorageCluster sc = Fixtures.sample();
    sc.getSpec().getDriver().setRegistration(Registration.Sidecars);
    sc.setStatus(applied(sc));
    sc.getSpec().getDriver().setRegistration(Registration.BuiltIn);
    StorageClusterStatus failed = failed(sc, "InvalidSpec", T1);
    assertThat(failed.getRegistration()).isEqualTo(Registration.Sidecars);
  }

  @Test
  void poolCapacityComesFromStorageCapacityObjects() {
    StorageCluster sc = Fixtures.sample();
    var cap =
        new CSIStorageCapacityBuilder()
            .withStorageClassName("soko-nvme")
            .withNewNodeTopology()
            .addToMatchLabels("topology.soko.dev/node", "n1")
            .endNodeTopology()
            .withNewCapacity("40Gi")
            .build();
    var pools = PoolSummary.pools(sc.getSpec(), List.of(), List.of(cap));
    assertThat(pools).hasSize(1);
    assertThat(pools.get(0).total()).isEqualTo("100Gi");
    assertThat(pools.get(0).available()).isEqualTo("40Gi");
    assertThat(PoolSummary.summary(pools).used()).isEqualTo("60Gi");
    assertThat(PoolSummary.format(new BigDecimal(1536L * 1024 * 1024))).isEqualTo("1.5Gi");
  }

  @Test
  void aThousandNodesListTheTenFullestPoolsAndSumThemAll() {
    StorageCluster sc = Fixtures.sample();
    List<io.fabric8.kubernetes.api.model.storage.CSIStorageCapacity> caps = new ArrayList<>();
    for (int i = 0; i < 1000; i++) {
      caps.add(
          new CSIStorageCapacityBuilder()
              .withStorageClassName("soko-nvme")
              .withNewNodeTopology()
              .addToMatchLabels("topology.soko.dev/node", String.format("n%04d", i))
              .endNodeTopology()
              .withNewCapacity(i == 500 ? "1Gi" : "40Gi")
              .build());
    }
    PoolSummary.Result r = PoolSummary.of(sc.getSpec(), caps);
    assertThat(r.listed()).hasSize(PoolSummary.LISTED);
    assertThat(r.listed().get(0).node()).isEqualTo("n0500");
    assertThat(r.more()).isEqualTo(990);
    assertThat(r.capacity().total())
        .isEqualTo(
            PoolSummary.format(new BigDecimal(100L << 30).multiply(BigDecimal.valueOf(1000))));
  }

  /** The status of a reconcile that found {@code nodes} serving nodes and these reports. */
  private static StorageClusterStatus withReports(
      StorageCluster sc, ClusterObserver.Workloads w, List<StorageNode> reports) {
    DesiredState desired =
        DesiredState.of(
            sc, VersionsTable.load(), ClusterFacts.offline(KubernetesVersion.parse("1.34")));
    return new StatusAggregator(sc, "1.2.3", T0)
        .applied(desired, desired.all().size())
        .kubernetesVersion("v1.34.0")
        .compatibility(List.of())
        .workloads(w, sc.getSpec().getController().getReplicas())
        .pools(
            PoolSummary.of(
                sc.getSpec(),
                StorageNodeReports.observe(
                    reports, "fast", Set.of("fast"), Set.of(), Set.of(), false, Reports.NOW),
                List.of()))
        .build();
  }

  @Test
  void aRefusedPoolDegradesTheInstallationNamingThePairsButLeavesItReady() {
    StorageCluster sc = Fixtures.sample();
    sc.getMetadata().setGeneration(1L);
    List<StorageNode> reports = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      reports.add(
          Reports.report(
              "fast", "n" + i, Reports.NOW, Reports.refused("nvme", "pool path /p is missing")));
    }
    for (int i = 5; i < 10; i++) {
      reports.add(Reports.report("fast", "n" + i, Reports.NOW, Reports.ready("nvme", 10, 1, 9, 0)));
    }

    StorageClusterStatus s = withReports(sc, workloads(sc, 10, 10, 10), reports);

    assertThat(condition(s, "Ready").getStatus()).isEqualTo("True");
    Condition degraded = condition(s, "Degraded");
    assertThat(degraded.getStatus()).isEqualTo("True");
    assertThat(degraded.getReason()).isEqualTo("PoolRefused");
    assertThat(degraded.getMessage())
        .startsWith(
            "5 pools refused: n0/nvme (pool path /p is missing), n1/nvme (pool path /p is"
                + " missing), n2/nvme (pool path /p is missing) and 2 more; no new volumes go"
                + " there, existing ones keep working");

    // Recovery: the pools are Ready again.
    sc.setStatus(s);
    List<StorageNode> healed = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      healed.add(Reports.report("fast", "n" + i, Reports.NOW, Reports.ready("nvme", 10, 1, 9, 0)));
    }
    StorageClusterStatus after = withReports(sc, workloads(sc, 10, 10, 10), healed);
    assertThat(condition(after, "Degraded").getStatus()).isEqualTo("False");
    assertThat(condition(after, "Degraded").getReason()).isEqualTo("AsExpected");
    assertThat(after.getPoolSummary().get(0).ready()).isEqualTo(10);
  }

  @Test
  void failingNodesOutrankARefusedPoolAndTheMessageNamesBoth() {
    StorageCluster sc = Fixtures.sample();
    List<StorageNode> reports =
        List.of(Reports.report("fast", "n0", Reports.NOW, Reports.refused("nvme", "missing")));

    Condition degraded = condition(withReports(sc, workloads(sc, 3, 2, 2), reports), "Degraded");

    assertThat(degraded.getReason()).isEqualTo("NodesFailing");
    assertThat(degraded.getMessage())
        .contains("n2 (soko-driver CrashLoopBackOff)")
        .contains("1 pool refused on its node: n0/nvme (missing)");
  }

  @Test
  void aLongRefusalReasonIsCutInTheCondition() {
    StorageCluster sc = Fixtures.sample();
    List<StorageNode> reports =
        List.of(
            Reports.report("fast", "n0", Reports.NOW, Reports.refused("nvme", "x".repeat(1024))));

    String message =
        condition(withReports(sc, workloads(sc, 1, 1, 1), reports), "Degraded").getMessage();

    assertThat(message).contains("x".repeat(PoolRefusals.MAX_REASON - 1) + "…)");
    assertThat(message).doesNotContain("x".repeat(PoolRefusals.MAX_REASON));
  }

  @Test
  void readyWaitsUntilTheKubeletHasRegisteredTheDriverOnEveryNodeOfASmallCluster() {
    StorageCluster sc = Fixtures.sample();
    sc.getMetadata().setGeneration(1L);
    StorageClusterStatus oneOfTwo = applied(sc, workloads(sc, 2, 2, 1));
    assertThat(condition(oneOfTwo, "Ready").getStatus()).isEqualTo("False");
    assertThat(condition(oneOfTwo, "Ready").getMessage())
        .contains("node plugin 2/2 ready, 1/2 registered with the kubelet");
    assertThat(oneOfTwo.getNodes().problems())
        .containsExactly(new dev.soko.api.v1alpha1.NodeProblem("n1", "NotRegistered", null));
    assertThat(condition(oneOfTwo, "Progressing").getStatus()).isEqualTo("True");
    assertThat(condition(oneOfTwo, "Degraded").getStatus()).isEqualTo("False");
    StorageClusterStatus both = applied(sc, workloads(sc, 2, 2, 2));
    assertThat(condition(both, "Ready").getStatus()).isEqualTo("True");
    assertThat(condition(both, "Progressing").getStatus()).isEqualTo("False");
  }

  @Test
  void oneCrashingNodeAmongAThousandIsDegradedButReady() {
    StorageCluster sc = Fixtures.sample();
    sc.getMetadata().setGeneration(1L);
    StorageClusterStatus s = applied(sc, workloads(sc, 1000, 999, 999));
    assertThat(condition(s, "Ready").getStatus()).isEqualTo("True");
    assertThat(condition(s, "Degraded").getStatus()).isEqualTo("True");
    assertThat(condition(s, "Degraded").getReason()).isEqualTo("NodesFailing");
    assertThat(condition(s, "Degraded").getMessage())
        .contains("1 of 1000 nodes")
        .contains("n999 (soko-driver CrashLoopBackOff)");
    assertThat(condition(s, "Progressing").getReason()).isEqualTo("Stalled");
    assertThat(s.getNodes().available()).isEqualTo(999);
  }

  @Test
  void tooFewServingNodesAreNotReady() {
    StorageCluster sc = Fixtures.sample();
    sc.getMetadata().setGeneration(1L);
    StorageClusterStatus s = applied(sc, workloads(sc, 1000, 899, 1000));
    assertThat(condition(s, "Ready").getStatus()).isEqualTo("False");
    assertThat(condition(s, "Ready").getReason()).isEqualTo("NodesUnavailable");
    assertThat(condition(s, "Ready").getMessage()).contains("899/1000 serve volumes (900 needed");
    assertThat(condition(s, "Degraded").getMessage()).contains("and 91 more");
    String json = Serialization.asJson(s);
    assertThat(json.length()).isLessThan(8 * 1024);
  }
}
